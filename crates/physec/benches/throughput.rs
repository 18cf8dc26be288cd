//! Encrypt + decrypt throughput per core at both levels, in Gbit/s of 64B/66B payload
//! (64 data bits per block, i.e. the MAC data rate the engine could sustain).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use physec::channel::{ChannelConfig, ChannelRx, ChannelTx};
use physec::keys::{KeyId, Role, TrafficKey};
use physec::link::{LinkConfig, LinkRx, LinkTx};
use physec::pcs::{PcsEncoder, TxItem};
use physec::time::Instant;
use physec::wire::block::Block66;
use std::hint::black_box;

fn key() -> TrafficKey {
    TrafficKey::new(KeyId(1), [7; 32], Instant(u64::MAX), Role::Initiator)
}

fn traffic(n: usize) -> Vec<Block66> {
    let frame: Vec<u8> = (0..1500u32).map(|i| i as u8).collect();
    let mut enc = PcsEncoder::default();
    let mut out = Vec::new();
    while out.len() < n {
        enc.encode(TxItem::Frame(&frame), &mut out);
    }
    out.truncate(n);
    out
}

fn channel(c: &mut Criterion) {
    let mut g = c.benchmark_group("channel_encrypt_decrypt");
    for k in [64usize, 256, 1024, 4096] {
        let cfg = ChannelConfig::new(k).expect("config");
        let mut tx = ChannelTx::new(cfg);
        let mut rx = ChannelRx::new(cfg);
        tx.install_key(&key()).expect("install");
        tx.activate(KeyId(1));
        rx.install_key(&key().for_peer()).expect("install");
        let plain = traffic(k);
        let mut line = Vec::with_capacity(cfg.line_blocks());
        let mut out = Vec::with_capacity(k);
        g.throughput(Throughput::Bytes(8 * k as u64));
        g.bench_with_input(BenchmarkId::from_parameter(k), &plain, |b, plain| {
            b.iter(|| {
                line.clear();
                out.clear();
                tx.encrypt_segment(Instant(0), plain, &mut line)
                    .expect("tx");
                rx.decrypt_segment(Instant(0), &line, &mut out).expect("rx");
                black_box(&out);
            })
        });
    }
    g.finish();
}

fn link(c: &mut Criterion) {
    let mut g = c.benchmark_group("link_encrypt_decrypt");
    for (lanes, period, periods) in [(4usize, 4096usize, 1usize), (4, 16384, 1)] {
        let cfg = LinkConfig::new(lanes, period, periods).expect("config");
        let mut tx = LinkTx::new(cfg);
        let mut rx = LinkRx::new(cfg);
        tx.install_key(&key()).expect("install");
        tx.activate(KeyId(1));
        rx.install_key(&key().for_peer()).expect("install");
        let plain = traffic(cfg.payload_blocks());
        let mut line = Vec::with_capacity(cfg.multiframe_blocks());
        let mut out = Vec::with_capacity(plain.len());
        g.throughput(Throughput::Bytes(8 * plain.len() as u64));
        g.bench_with_input(
            BenchmarkId::from_parameter(period * periods),
            &plain,
            |b, plain| {
                b.iter(|| {
                    line.clear();
                    out.clear();
                    tx.encrypt_multiframe(Instant(0), plain, &mut line)
                        .expect("tx");
                    rx.decrypt_multiframe(Instant(0), &line, &mut out)
                        .expect("rx");
                    black_box(&out);
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, channel, link);
criterion_main!(benches);
