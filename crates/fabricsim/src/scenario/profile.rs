//! Fabric profiles: named bundles of scenario settings (`profile = "ns3"` at the top of a
//! scenario, or in a variant's `set`).
//!
//! A profile is a list of (field path, value) written into the scenario's TOML tree
//! before it is deserialized, wherever the scenario does not set that field itself: the
//! file, `--set` and a variant's `set` always win. So a profile is exactly the fields it
//! lists, visible in `fabricsim list`, and `scenario.resolved.toml` (which keeps the
//! `profile` key) reruns to the same results. A new profile is one entry in [`PROFILES`].

use super::ScenarioError;

/// One profile.
pub struct Profile {
    /// The name scenario files use.
    pub name: &'static str,
    /// What it stands for.
    pub about: &'static str,
    /// (dotted field path, value in TOML syntax).
    pub settings: &'static [(&'static str, &'static str)],
}

/// Every profile; `default` (no settings) is today's fabricsim.
pub static PROFILES: &[Profile] = &[
    Profile {
        name: "default",
        about: "fabricsim's own choices (no field changed)",
        settings: &[],
    },
    Profile {
        name: "ns3",
        about: "parity with the HPCC ns-3 module (third.cc, rdma-hw.cc, switch-node.cc and \
                its run scripts): how its switches queue ACKs, how it signals CNPs and \
                times DCQCN's cuts, its rate floors, its PFC alpha per port speed and its \
                fixed-size INT header",
        settings: &[
            // switch-node.cc: ACKs and NACKs take the data packet's queue (qIndex = pg)
            // unless ACK_HIGH_PRIO, which the scripts leave at 0 in switches; the NIC
            // still sends them from its high-priority queue.
            ("transport.feedback_queue", "\"data\""),
            // rdma-hw.cc: the receiver sets the CNP flag on the ACK or NACK answering a
            // CE-marked packet; there is no CNP frame and no NP pacing.
            ("transport.cnp", "\"ack_flag\""),
            // rdma-hw.cc (Mellanox DCQCN): the rate is cut on a periodic decrease timer
            // started by the first CNP.
            ("cc.dcqcn.cut_on", "\"timer\""),
            // The run scripts' MIN_RATE (1000 Mb/s), for DCQCN and TIMELY alike.
            ("cc.dcqcn.rmin", "\"1Gbps\""),
            ("cc.timely.min_rate", "\"1Gbps\""),
            // third.cc: pfc_a_shift starts at 3 (alpha 1/8) for a port at the NIC rate and
            // drops by one per doubling above it (100G NICs: 1/4 at 200G, 1/2 at 400G).
            (
                "fabric.pfc.alpha_per_rate",
                "{ \"200Gbps\" = 0.25, \"400Gbps\" = 0.5, \"800Gbps\" = 1.0 }",
            ),
            // int-header.h: the NIC adds the whole INT header (5 hops) to every data
            // packet, and switches write quantized fields into it.
            ("fabric.int.framing", "\"fixed\""),
            ("fabric.int.quantize", "true"),
        ],
    },
    Profile {
        name: "roce",
        about: "document 002's RoCE fabric: Ethernet with RoCEv2 headers (58 B), lossless by \
                PFC, the SN2410 switch of its latency test (300 ns)",
        settings: &[
            ("transport.header", "\"rocev2\""),
            ("fabric.switch_latency", "\"sn2410\""),
            ("fabric.pfc.enabled", "true"),
            ("fabric.credit.enabled", "false"),
        ],
    },
    Profile {
        name: "ib_like",
        about: "document 002's InfiniBand-like fabric: IB headers (26 B: LRH, BTH, CRCs), \
                lossless by credits with cut-through instead of PFC, the SB7800 EDR switch \
                (90 ns); pair with transport.header = \"mini_packet\" for Tianhe-1A's 8 B",
        settings: &[
            ("transport.header", "\"ib\""),
            ("fabric.switch_latency", "\"sb7800\""),
            ("fabric.pfc.enabled", "false"),
            ("fabric.credit.enabled", "true"),
        ],
    },
];

/// The profile named `name`.
pub fn find(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// Writes the settings of the profile `table` names (its `profile` key) into `table`
/// where it has no value of its own. An unknown name is an error naming the field and
/// the profiles there are.
pub fn apply(table: &mut toml::Table, file: &str) -> Result<(), ScenarioError> {
    let Some(v) = table.get("profile") else {
        return Ok(());
    };
    let names = || {
        PROFILES
            .iter()
            .map(|p| format!("\"{}\"", p.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let profile = v.as_str().and_then(find).ok_or_else(|| {
        ScenarioError::field(
            file,
            "profile",
            format!(
                "`{v}` is not a profile: use one of {}{}",
                names(),
                v.as_str()
                    .map(|t| crate::base::suggest::did_you_mean(t, PROFILES.iter().map(|p| p.name)))
                    .unwrap_or_default()
            ),
        )
    })?;
    for (path, value) in profile.settings {
        let value = super::parse_override_value(value);
        let mut cur: &mut toml::Table = table;
        let mut parts = path.split('.').peekable();
        while let Some(part) = parts.next() {
            if parts.peek().is_none() {
                cur.entry(part.to_string()).or_insert(value);
                break;
            }
            let entry = cur
                .entry(part.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            let Some(t) = entry.as_table_mut() else {
                // The scenario holds something else there: its own deserialization
                // reports it.
                break;
            };
            cur = t;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_parses_and_the_scenario_wins() {
        let src = "profile = \"ns3\"\n[transport]\ncnp = \"frame\"\n";
        let mut t: toml::Table = src.parse().unwrap();
        apply(&mut t, "x.toml").unwrap();
        // Set by the profile where the file says nothing...
        assert_eq!(t["transport"]["feedback_queue"].as_str(), Some("data"));
        assert_eq!(t["cc"]["dcqcn"]["cut_on"].as_str(), Some("timer"));
        assert_eq!(
            t["fabric"]["pfc"]["alpha_per_rate"]["400Gbps"].as_float(),
            Some(0.5)
        );
        // ...and the file's own value kept.
        assert_eq!(t["transport"]["cnp"].as_str(), Some("frame"));
        // Every value of every profile is TOML (a bare word would come back a string
        // quietly: none of them is meant as one unless quoted).
        for p in PROFILES {
            for (path, v) in p.settings {
                let parsed = format!("v = {v}").parse::<toml::Table>();
                assert!(parsed.is_ok(), "{}: {path} = {v}", p.name);
            }
        }
    }

    #[test]
    fn roce_and_ib_like_are_the_documents_two_fabrics() {
        let resolve = |src: &str| {
            let t: toml::Table = src.parse().unwrap();
            let sc = crate::scenario::from_table(&t, "x.toml").unwrap_or_else(|e| panic!("{e}"));
            (
                sc.transport.header,
                sc.fabric.switch_latency,
                sc.fabric.pfc.enabled,
                sc.fabric.credit.enabled,
            )
        };
        let topo = "[topology]\nkind = \"leaf_spine\"\nleaves = 1\nspines = 0\nservers_per_leaf = 2\nhost_rate = \"100Gbps\"\n";
        let ns = crate::base::units::NS;
        assert_eq!(
            resolve(&format!("profile = \"roce\"\n{topo}")),
            (58, 300 * ns, true, false)
        );
        assert_eq!(
            resolve(&format!("profile = \"ib_like\"\n{topo}")),
            (26, 90 * ns, false, true)
        );
        // The mini-packet header and another switch on top of a profile.
        assert_eq!(
            resolve(&format!(
                "profile = \"ib_like\"\n{topo}[transport]\nheader = \"mini_packet\"\n[fabric]\nswitch_latency = \"aries\"\n"
            )),
            (8, 100 * ns, false, true)
        );
    }

    #[test]
    fn an_unknown_profile_names_the_field_and_the_choices() {
        let mut t: toml::Table = "profile = \"ns-3\"".parse().unwrap();
        let e = apply(&mut t, "x.toml").unwrap_err();
        let m = e.to_string();
        assert!(m.contains("x.toml") && m.contains("profile"), "{m}");
        assert!(m.contains("\"ns3\"") && m.contains("\"default\""), "{m}");
        let mut none: toml::Table = "seed = 2".parse().unwrap();
        apply(&mut none, "x.toml").unwrap();
        assert_eq!(none.len(), 1, "no profile, no change");
    }
}
