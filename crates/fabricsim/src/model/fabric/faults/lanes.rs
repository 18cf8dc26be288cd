//! Lane degrade (document 003): a link runs on 4 lanes; when a lane fails it keeps
//! running on 2, then 1, each step halving its rate, in both directions.
//!
//! A link's configured rate is its rate on 4 lanes; on `n` lanes both ports serialize at
//! `n / 4` of it (a PHYSec port's reduced serialization rate scales the same way). The
//! frame being serialized when the lanes change keeps its time, frames already on the
//! wire keep their arrival; everything sent afterwards takes the new rate. ECMP does not
//! weigh links by rate, so routing does not change. Under credit flow control the
//! cut-through rule is re-applied: a switch whose input became slower than one of its
//! outputs stores and forwards that input's packets (document 003's dynamic switch from
//! VCT to store-and-forward as link bandwidth changes).

use crate::base::units::Rate;
use crate::model::fabric::Fabric;

impl Fabric {
    /// Graph link `c` runs on `lanes` of its 4 lanes from now on.
    pub(crate) fn set_lanes(&mut self, c: usize, lanes: u8) {
        let fs = self.faults.as_mut().expect("faults model");
        for p in fs.cables.ports[c] {
            let lf = &mut fs.links[p.idx()];
            lf.lanes = lanes;
            let scale = |r: Rate| Rate(r.0 * lanes as u64 / 4);
            self.ports[p].set_rates(scale(lf.base_rate), scale(lf.base_ser_rate));
        }
        if self.credit().is_some() {
            self.refresh_cut_through();
        }
    }
}
