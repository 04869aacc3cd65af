//! A schedule in words, for a plan's description: each part as a clause, from the type.

use dsl_core::atom::tma::{CacheHint, L2Promotion};
use dsl_core::pipeline::{Raster, StreamKRegion};

use super::parts::{
    Buffers, Cluster, Consumers, SubTile, Take, TileSource, TransposedStaging, Waves,
};
use super::HopperSchedule;

impl HopperSchedule {
    /// `128x256x64 tile, 3 stages, groups of 8, stream-K by shape`: the tile, the stages and
    /// every part that is not the default, in the spelling's order.
    pub fn describe(&self) -> String {
        let (m, n, k) = self.tile.mnk();
        let cluster = match self.cluster {
            Cluster::One => String::new(),
            c => {
                let (x, y) = c.blocks();
                format!(", {x}x{y} cluster")
            }
        };
        let order = match self.order {
            Raster::Hilbert => "Hilbert order".to_string(),
            Raster::AlongM => "order along M".to_string(),
            Raster::Grouped { group } => format!("groups of {group}"),
        };
        let in_flight = match self.in_flight.batches() {
            0 => "",
            _ => ", a wgmma batch in flight",
        };
        let staged = match self.sub_tile() {
            Some(SubTile::Columns(c)) if c.buffers() == Buffers::Two => format!(
                ", output staged {} columns at a time through two tiles in turns",
                c.cols()
            ),
            Some(SubTile::Columns(c)) => format!(", output staged {} columns at a time", c.cols()),
            _ if self.epilogue_warps() => {
                ", each staged tile finished and stored by the idle producer warps".to_string()
            }
            None => ", D stored from the registers, no staging tile".to_string(),
            _ => String::new(),
        };
        let resident = match self.resident_b() {
            None => String::new(),
            Some(r) if self.b_column_resident() => {
                format!(", B's {} k-tiles resident per column of tiles", r.k_tiles())
            }
            Some(r) => format!(", B's {} k-tiles resident", r.k_tiles()),
        };
        let pingpong = match (&self.consumers, self.shared_staging()) {
            (Consumers::PingPong(_), true) => ", ping-pong consumers sharing one staging in turns",
            (Consumers::PingPong(_), false) => ", ping-pong consumers",
            _ => "",
        };
        let swap = match self.transposed_staging() {
            Some(TransposedStaging::Plain) => ", A and B swapped",
            Some(TransposedStaging::Swizzled) => ", A and B swapped, the staging swizzled",
            None => "",
        };
        let promotion = match self.l2.promotion {
            L2Promotion::B128 => String::new(),
            L2Promotion::None => ", no L2 promotion".to_string(),
            p => format!(", {}-byte L2 promotion", p.bytes()),
        };
        // In the kernel's terms, as spelled: swapped, its A is the problem's B.
        let hints: String = ["A", "B", "D"]
            .iter()
            .zip(self.l2.hints.each())
            .filter_map(|(what, h)| {
                let how = match h? {
                    CacheHint::EvictNormal => "evict-normal",
                    CacheHint::EvictFirst => "evict-first",
                    CacheHint::EvictLast => "evict-last",
                };
                Some(format!(", {what} {how} in L2"))
            })
            .collect();
        // Ping-pong consumers own whole tiles: no stream-K; from a queue, handed out as blocks
        // go. Evened waves apply to whole tiles, and where stream-K may share the last wave
        // out, to the launches it does not.
        let (walk, even) = match self.consumers {
            Consumers::PingPong(p) => (
                match p.source {
                    TileSource::Queue(Take::Late) => {
                        "whole tiles from a queue, each taken once the last one's loads are issued"
                    }
                    TileSource::Queue(Take::Early) => "whole tiles from a queue",
                    TileSource::Static => "whole tiles",
                },
                " in evened waves",
            ),
            Consumers::Cooperative(c) => (
                match (c.waves, c.stream_k) {
                    (Waves::Streamed, _) => "stream-K over every tile",
                    (_, StreamKRegion::First) => "stream-K by shape",
                    (_, StreamKRegion::Last) => "stream-K by shape after the whole tiles",
                },
                ", else evened waves",
            ),
        };
        let even = if self.even_waves() { even } else { "" };
        format!(
            "{m}x{n}x{k} tile, {} stages{cluster}, {order}{in_flight}{staged}{resident}\
             {pingpong}{swap}{promotion}{hints}, {walk}{even}",
            self.tile.stages()
        )
    }
}
