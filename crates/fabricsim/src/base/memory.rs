//! Memory accounting: the bytes a container holds at its capacity. The parts count their
//! own structures with these (`heap_bytes`); the run's breakdown by part is
//! `crate::sim::memory`, the estimate before anything is built `crate::scenario::budget`.

use std::collections::VecDeque;

/// Bytes a vector holds: its capacity times its element size.
pub fn vec_bytes<T>(v: &Vec<T>) -> u64 {
    (v.capacity() * std::mem::size_of::<T>()) as u64
}

/// Bytes a ring holds: its capacity times its element size.
pub fn ring_bytes<T: Copy>(v: &crate::base::ring::Ring<T>) -> u64 {
    (v.capacity() * std::mem::size_of::<T>()) as u64
}

/// Bytes a ring holds: its capacity times its element size.
pub fn deque_bytes<T>(v: &VecDeque<T>) -> u64 {
    (v.capacity() * std::mem::size_of::<T>()) as u64
}
