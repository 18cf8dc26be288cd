pub mod mac;
pub mod time;
pub mod wire;
pub mod pcs;
