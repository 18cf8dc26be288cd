//! 64B/66B round trips: random frame streams (minimum-size to jumbo, with gaps, PFC and
//! ordered sets) through encoder, scrambler, descrambler and decoder come back exactly.

use physec::mac;
use physec::pcs::{Descrambler, PcsDecoder, PcsEncoder, RxEvent, Scrambler, TxItem};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Item {
    Frame(Vec<u8>),
    Idle(usize),
    OrderedSet([u8; 3]),
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        6 => (mac::MIN_FRAME..1600usize, any::<u8>()).prop_map(|(n, s)| Item::Frame(
            (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(s)).collect()
        )),
        1 => (8000..=mac::JUMBO_FRAME, any::<u8>()).prop_map(|(n, s)| Item::Frame(vec![s; n])),
        1 => Just(Item::Frame(vec![0x55; mac::MIN_FRAME])),
        2 => (0usize..40).prop_map(Item::Idle),
        1 => any::<[u8; 3]>().prop_map(Item::OrderedSet),
    ]
}

fn run(items: &[Item], seed: u64, ipg: usize) -> Vec<RxEvent> {
    let tx_items: Vec<TxItem<'_>> = items
        .iter()
        .map(|i| match i {
            Item::Frame(f) => TxItem::Frame(f),
            Item::Idle(n) => TxItem::Idle(*n),
            Item::OrderedSet(d) => TxItem::OrderedSet(*d),
        })
        .collect();
    let mut blocks = PcsEncoder::new(ipg).encode_all(&tx_items);
    // One leading idle block lets the descrambler synchronise from a different state.
    blocks.insert(0, physec::wire::block::Block66::IDLE);
    Scrambler::new(seed).scramble_blocks(&mut blocks);
    Descrambler::new(!seed).descramble_blocks(&mut blocks);
    let mut dec = PcsDecoder::new();
    let mut out = Vec::new();
    dec.push_all(&blocks, &mut out);
    assert_eq!(dec.stats().frames_dropped, 0);
    assert_eq!(dec.stats().invalid_blocks, 0);
    out
}

fn expected(items: &[Item]) -> Vec<RxEvent> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::Frame(f) => Some(RxEvent::Frame(f.clone())),
            Item::OrderedSet(d) => Some(RxEvent::OrderedSet(*d)),
            Item::Idle(_) => None,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_streams_round_trip(items in prop::collection::vec(item(), 1..12),
                                 seed in any::<u64>(), ipg in 1usize..20) {
        prop_assert_eq!(run(&items, seed, ipg), expected(&items));
    }
}

#[test]
fn every_frame_length_mod_8_round_trips() {
    // Exercise all eight terminate block types and both pad positions.
    let items: Vec<Item> = (64..80usize)
        .map(|n| Item::Frame((0..n as u8).collect()))
        .collect();
    assert_eq!(run(&items, 7, 12), expected(&items));
}

#[test]
fn pfc_and_pause_frames_round_trip() {
    let items = vec![
        Item::Frame(mac::pfc_frame([2, 0, 0, 0, 0, 9], 0xff, [0xffff; 8])),
        Item::Frame(mac::pause_frame([2, 0, 0, 0, 0, 9], 7)),
    ];
    let got = run(&items, 1, 12);
    assert_eq!(got, expected(&items));
    for ev in got {
        let RxEvent::Frame(f) = ev else {
            panic!("unexpected {ev:?}")
        };
        assert!(mac::fcs_ok(&f));
    }
}

#[test]
fn corrupted_block_drops_the_frame_only() {
    let a = vec![1u8; 100];
    let b = vec![2u8; 100];
    let mut blocks = PcsEncoder::default().encode_all(&[TxItem::Frame(&a), TxItem::Frame(&b)]);
    // Break the sync header of a data block inside the first frame.
    blocks[3].sync = 0b00;
    let mut dec = PcsDecoder::new();
    let mut out = Vec::new();
    dec.push_all(&blocks, &mut out);
    assert_eq!(out, vec![RxEvent::Frame(b)]);
    assert_eq!(dec.stats().frames_dropped, 1);
    assert_eq!(dec.stats().invalid_blocks, 1);
}
