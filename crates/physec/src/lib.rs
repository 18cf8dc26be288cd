pub mod channel;
pub mod compress;
pub mod keys;
pub mod km;
pub mod mac;
pub mod time;
pub mod wire;
pub mod pcs;
