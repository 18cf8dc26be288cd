-- Wireshark dissector for the GSE frames fabricsim writes in its captures
-- (capture.pcapng, `[record.pcap]`): EtherType 0x88B5, the layout of
-- crates/fabricsim/src/base/wire/gse.rs (document 000 names the messages but gives no
-- bytes; this is fabricsim's layout).
--
--   common header: version (1 byte) = 1 | type (1) | header length in bytes (2)
--   type 1, DGSQ REQUEST:   source GSP (4) | destination host (4) | bytes (8)
--   type 2, DGSQ GRANT:     destination host (4) | bytes (8) | via port (4, 0xFFFFFFFF: any)
--   type 3, PKTC tag:       next EtherType (2) | index in container (2) | container (4)
--                           | packets in previous container (2) | zero (2)
--   type 4, hw collective:  collective (4) | iteration (4) | rank (4)
--                           | direction (1: 0 up, 1 result) | zero (3)
-- All fields big-endian. A PKTC tag is followed by the packet it carries (IPv4: the
-- RoCEv2 packet), handed to the dissector of its next EtherType.
--
-- Use:  wireshark -X lua_script:scripts/wireshark/gse.lua capture.pcapng
--       tshark -X lua_script:scripts/wireshark/gse.lua -r capture.pcapng -V
-- or copy this file into Wireshark's personal plugins folder (Help > About > Folders).

local gse = Proto("fabricsim_gse", "fabricsim GSE")

local types = {
    [1] = "DGSQ REQUEST",
    [2] = "DGSQ GRANT",
    [3] = "PKTC container tag",
    [4] = "hardware collective message",
}
local directions = { [0] = "up (contribution)", [1] = "down (result)" }

local f = {
    version = ProtoField.uint8("gse.version", "Version", base.DEC),
    type = ProtoField.uint8("gse.type", "Type", base.DEC, types),
    length = ProtoField.uint16("gse.length", "Header length", base.DEC),
    from_gsp = ProtoField.uint32("gse.from_gsp", "Source GSP", base.DEC),
    host = ProtoField.uint32("gse.host", "Destination host", base.DEC),
    bytes = ProtoField.uint64("gse.bytes", "Bytes", base.DEC),
    via = ProtoField.uint32("gse.via", "Via port", base.DEC),
    next = ProtoField.uint16("gse.next", "Next EtherType", base.HEX),
    index = ProtoField.uint16("gse.index", "Index in container", base.DEC),
    container = ProtoField.uint32("gse.container", "Container", base.DEC),
    prev = ProtoField.uint16("gse.prev", "Packets in previous container", base.DEC),
    coll = ProtoField.uint32("gse.collective", "Collective", base.DEC),
    iter = ProtoField.uint32("gse.iteration", "Iteration", base.DEC),
    rank = ProtoField.uint32("gse.rank", "Rank", base.DEC),
    direction = ProtoField.uint8("gse.direction", "Direction", base.DEC, directions),
}
gse.fields = {
    f.version, f.type, f.length, f.from_gsp, f.host, f.bytes, f.via, f.next, f.index,
    f.container, f.prev, f.coll, f.iter, f.rank, f.direction,
}

local ef_bad = ProtoExpert.new("gse.bad", "GSE header malformed", expert.group.MALFORMED,
    expert.severity.ERROR)
gse.experts = { ef_bad }

local ethertypes = DissectorTable.get("ethertype")

-- The header length each type has.
local lengths = { [1] = 20, [2] = 20, [3] = 16, [4] = 20 }

function gse.dissector(tvb, pinfo, tree)
    if tvb:len() < 4 then
        return 0
    end
    pinfo.cols.protocol = "GSE"
    local kind = tvb(1, 1):uint()
    local len = tvb(2, 2):uint()
    local t = tree:add(gse, tvb(0, math.min(len, tvb:len())))
    t:add(f.version, tvb(0, 1))
    t:add(f.type, tvb(1, 1))
    t:add(f.length, tvb(2, 2))
    if tvb(0, 1):uint() ~= 1 or lengths[kind] ~= len or tvb:len() < len then
        t:add_proto_expert_info(ef_bad, "unknown version, type or length")
        return tvb:len()
    end
    local info
    if kind == 1 then
        t:add(f.from_gsp, tvb(4, 4))
        t:add(f.host, tvb(8, 4))
        t:add(f.bytes, tvb(12, 8))
        info = string.format("REQUEST from GSP %d: %s bytes to host %d", tvb(4, 4):uint(),
            tvb(12, 8):uint64(), tvb(8, 4):uint())
    elseif kind == 2 then
        t:add(f.host, tvb(4, 4))
        t:add(f.bytes, tvb(8, 8))
        t:add(f.via, tvb(16, 4))
        info = string.format("GRANT %s bytes to host %d", tvb(8, 8):uint64(), tvb(4, 4):uint())
    elseif kind == 3 then
        t:add(f.next, tvb(4, 2))
        t:add(f.index, tvb(6, 2))
        t:add(f.container, tvb(8, 4))
        t:add(f.prev, tvb(12, 2))
        local next = tvb(4, 2):uint()
        local inner = ethertypes:get_dissector(next)
        if inner ~= nil then
            inner:call(tvb(len):tvb(), pinfo, tree)
        end
        -- Said after the inner dissector, which rewrites the columns.
        pinfo.cols.info:prepend(string.format("[PKTC container %d #%d] ", tvb(8, 4):uint(),
            tvb(6, 2):uint()))
        return tvb:len()
    else
        t:add(f.coll, tvb(4, 4))
        t:add(f.iter, tvb(8, 4))
        t:add(f.rank, tvb(12, 4))
        t:add(f.direction, tvb(16, 1))
        info = string.format("collective %d iteration %d rank %d %s", tvb(4, 4):uint(),
            tvb(8, 4):uint(), tvb(12, 4):uint(), directions[tvb(16, 1):uint()] or "?")
    end
    pinfo.cols.info = info
    return len
end

ethertypes:add(0x88b5, gse)
