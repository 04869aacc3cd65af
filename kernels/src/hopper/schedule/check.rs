//! [`HopperSchedule::check`]: the rules the types leave: ranges that depend on the tile, the
//! reach of a cluster and of a resident B, and the shared-memory fit. Each refusal is a
//! [`Refusal`] ([`super::refusal`]).

use dsl_core::atom::tma::CacheHint;
use dsl_core::pipeline::{Raster, StreamKRegion};

use super::parts::{
    Buffers, Cluster, Consumers, Cooperative, InFlight, LastWave, Store, SubTile, TileSource,
    TransposedStaging, Waves,
};
use super::refusal::{
    Refusal, MAX_ACCUMULATORS, MAX_ACCUMULATORS_DIRECT, MAX_ACCUMULATORS_THREE_CONSUMERS,
};
use super::{HopperSchedule, DYNAMIC_SMEM_ALIGN, SMEM_LIMIT};

impl HopperSchedule {
    /// Why the program does not take this schedule, if it does not: ranges that depend on the
    /// tile, the reach of a cluster and of a resident B, and the shared-memory fit
    /// ([`SMEM_LIMIT`], static barriers included).
    pub fn check(&self) -> Result<(), Refusal> {
        self.check_ranges()?;
        self.check_reach()?;
        self.check_fit(SMEM_LIMIT)
    }

    /// The ranges of one part that depend on another (the tile, mostly).
    fn check_ranges(&self) -> Result<(), Refusal> {
        let (m, n, k) = self.tile.mnk();
        if !n.is_multiple_of(16) && !self.swapped() {
            return Err(Refusal::TileN(n));
        }
        if self.order == (Raster::Grouped { group: 0 }) {
            return Err(Refusal::Group);
        }
        if self.in_flight == InFlight::One && self.tile.stages() < 3 {
            return Err(Refusal::InFlightStages(self.tile.stages()));
        }
        if let Some(SubTile::Columns(c)) = self.sub_tile() {
            if !n.is_multiple_of(c.cols()) || c.cols() >= n {
                return Err(Refusal::SubTile(c.cols()));
            }
            if c.buffers() == Buffers::Two && !(n / c.cols()).is_multiple_of(2) {
                return Err(Refusal::TwoBuffers(n / c.cols()));
            }
        }
        match self.store() {
            Store::Direct(w) => {
                if !n.is_multiple_of(w.span()) {
                    return Err(Refusal::DirectSpan(w.bytes(), w.span()));
                }
                if matches!(
                    self.l2.hints.d,
                    Some(CacheHint::EvictNormal | CacheHint::EvictLast)
                ) {
                    return Err(Refusal::DirectHint);
                }
            }
            Store::Tma(_) | Store::EpilogueWarps => {}
        }
        let accumulators = self.consumer_rows() * n / 128;
        let most = match self.store() {
            Store::Direct(_) => MAX_ACCUMULATORS_DIRECT,
            Store::Tma(_) | Store::EpilogueWarps => MAX_ACCUMULATORS,
        };
        // Three consumers have a third fewer registers each, and the stores from the registers
        // and the epilogue warps are built for one or two.
        if self.consumers() == 3
            && (accumulators > MAX_ACCUMULATORS_THREE_CONSUMERS
                || !matches!(self.store(), Store::Tma(_)))
        {
            return Err(Refusal::ThreeConsumers(m, n, accumulators));
        }
        match self.consumers {
            // A ping-pong consumer holds a whole tile's accumulators: at most 128 per thread.
            Consumers::PingPong(_) if !matches!(m, 64 | 128) || m * n > 128 * 128 => {
                Err(Refusal::PingPongTile(m, n))
            }
            Consumers::Cooperative(_) if accumulators > most => {
                Err(Refusal::Accumulators(m, n, accumulators))
            }
            _ => Ok(()),
        }?;
        if self.transposed_staging() == Some(TransposedStaging::Swizzled)
            && self.consumer_rows() != 64
        {
            return Err(Refusal::SwizzledTransposeRows(self.consumer_rows()));
        }
        let (x, _) = self.cluster.blocks();
        if self.cluster != Cluster::One && (k != 64 || !n.is_multiple_of(8 * x)) {
            let (x, y) = self.cluster.blocks();
            return Err(Refusal::Multicast(k, n, x, y));
        }
        Ok(())
    }

    /// What a cluster, a resident B and the walks' variants reach.
    fn check_reach(&self) -> Result<(), Refusal> {
        let one_block = self.cluster == Cluster::One;
        // Stream-K over every tile has no whole tiles to walk its region before or after.
        if let Consumers::Cooperative(Cooperative {
            waves: Waves::Streamed,
            stream_k: StreamKRegion::Last,
            ..
        }) = self.consumers
        {
            return Err(Refusal::Streamed);
        }
        // Each ping-pong consumer owns a ring stage: a stage that the cluster shares would be
        // freed by one block's owner while the other's still reads it.
        if let Consumers::PingPong(p) = self.consumers {
            if self.ring_shared() {
                return Err(Refusal::PingPong);
            }
            if matches!(p.source, TileSource::Queue(_)) && !one_block {
                return Err(Refusal::Queue);
            }
            if matches!(p.source, TileSource::Queue(_)) && p.last_wave == LastWave::Evened {
                return Err(Refusal::EvenedWaves);
            }
            let swizzled =
                matches!(self.store(), Store::Direct(_)) || self.epilogue_cols().is_multiple_of(64);
            if p.last_wave == LastWave::RowsSharedOut
                && (self.resident_b().is_none()
                    || !one_block
                    || self.order == Raster::Hilbert
                    || !swizzled)
            {
                return Err(Refusal::RowSplit);
            }
        }
        if let Some(r) = self.resident_b() {
            if matches!(self.cluster, Cluster::AlongN(_)) {
                return Err(Refusal::ResidentB);
            }
            if r.prefetch_waves() > 0
                && (!one_block || self.row_split() || self.b_column_resident())
            {
                return Err(Refusal::Prefetch(r.prefetch_waves()));
            }
        }
        Ok(())
    }

    /// Whether the rings, the staging and the static barriers fit in `limit` bytes of shared
    /// memory.
    pub fn check_fit(&self, limit: u32) -> Result<(), Refusal> {
        if self.block_smem_bytes() > limit {
            let (m, n, k) = self.tile.mnk();
            return Err(Refusal::SharedMemory {
                stages: self.tile.stages(),
                m,
                n,
                k,
                dynamic: self.smem_bytes(),
                fixed: self
                    .static_smem_bytes()
                    .next_multiple_of(DYNAMIC_SMEM_ALIGN),
                limit,
            });
        }
        Ok(())
    }
}
