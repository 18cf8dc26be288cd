//! Foundations every layer uses: units, typed ids, seeds, parameters and their
//! suggestions, bounded input files, floors, presets, memory accounting and the block
//! pool, the prefetch hint, wire formats and chart drawing. Imports nothing of the crate.

pub mod block_pool;
pub mod charts;
pub mod floors;
pub mod ids;
pub mod input_file;
pub mod memory;
pub mod param;
pub mod prefetch;
pub mod presets;
pub mod ring;
pub mod seed;
pub mod suggest;
pub mod trusted;
pub mod units;
pub mod wire;
