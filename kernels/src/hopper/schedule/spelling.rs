//! The spelling of a [`HopperSchedule`]: `Display` writes the parts a schedule has in one
//! order, leaving out the defaults; `FromStr` reads the parts (each at most once, in any
//! order), builds the typed value from them (a part that the others leave no place for is
//! refused there: `_o` without `_p` has no field to go into) and checks it.

use std::fmt;
use std::str::FromStr;

use dsl_core::atom::tma::{CacheHint, L2Promotion};
use dsl_core::pipeline::{Raster, StreamKRegion};

use super::parts::{
    BPlacement, Buffers, CacheHints, Cluster, Columns, Consumers, Cooperative, InFlight, L2Policy,
    LastWave, Operands, PingPong, PingPongStore, ResidentB, Staging, Store, StoreWidth, SubTile,
    Take, Tile, TileSource, TransposedStaging, Waves,
};
use super::refusal::{Refusal, ScheduleError};
use super::HopperSchedule;

impl fmt::Display for HopperSchedule {
    /// The canonical spelling, which [`HopperSchedule::from_str`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (m, n, k) = self.tile.mnk();
        write!(f, "{m}x{n}x{k}s{}", self.tile.stages())?;
        if self.cluster != Cluster::One {
            let (x, y) = self.cluster.blocks();
            write!(f, "_c{x}x{y}")?;
        }
        match self.order {
            Raster::Hilbert => write!(f, "_h"),
            Raster::Grouped { group: 8 } => Ok(()),
            Raster::Grouped { group } => write!(f, "_g{group}"),
            Raster::AlongM => write!(f, "_gm"),
        }?;
        if self.in_flight != InFlight::Zero {
            write!(f, "_f{}", self.in_flight.batches())?;
        }
        if let Some(SubTile::Columns(c)) = self.sub_tile() {
            write!(f, "_e{}", c.cols())?;
            if c.buffers() == Buffers::Two {
                write!(f, "_d2")?;
            }
        }
        if let Some(r) = self.resident_b() {
            write!(f, "_r{}", r.k_tiles())?;
        }
        if let Consumers::PingPong(p) = self.consumers {
            write!(f, "_p")?;
            match p.source {
                TileSource::Static => Ok(()),
                TileSource::Queue(Take::Early) => write!(f, "_q"),
                TileSource::Queue(Take::Late) => write!(f, "_ql"),
            }?;
        }
        if self.prefetch_waves() > 0 {
            write!(f, "_a{}", self.prefetch_waves())?;
        }
        if self.shared_staging() {
            write!(f, "_o")?;
        }
        if self.l2.promotion != L2Promotion::B128 {
            write!(f, "_l{}", self.l2.promotion.bytes())?;
        }
        if self.l2.hints != CacheHints::NONE {
            write!(f, "_v")?;
            for h in self.l2.hints.each() {
                write!(f, "{}", hint_letter(h))?;
            }
        }
        if self.stream_k_region() == Some(StreamKRegion::Last) {
            write!(f, "_w")?;
        }
        match self.store() {
            Store::Direct(w) => write!(f, "_u{}", w.bytes())?,
            Store::EpilogueWarps => write!(f, "_x")?,
            Store::Tma(_) => {}
        }
        if self.row_split() {
            write!(f, "_b")?;
        }
        if self.even_waves() {
            write!(f, "_n")?;
        }
        if self.streamed() {
            write!(f, "_k")?;
        }
        match self.transposed_staging() {
            Some(TransposedStaging::Plain) => write!(f, "_t")?,
            Some(TransposedStaging::Swizzled) => write!(f, "_t_z")?,
            None => {}
        }
        Ok(())
    }
}

impl FromStr for HopperSchedule {
    type Err = ScheduleError;

    /// The spelling of the [module's docs](super); `wide` is [`HopperSchedule::WIDE`]. The error
    /// names the spelling and the rule it breaks.
    fn from_str(spec: &str) -> Result<Self, ScheduleError> {
        let refused = |refusal: Refusal| ScheduleError::Spelled {
            spelling: spec.to_string(),
            refusal,
        };
        if spec == "wide" {
            return Ok(HopperSchedule::WIDE);
        }
        let schedule = Parts::read(spec).and_then(Parts::build).map_err(refused)?;
        schedule.check().map_err(refused)?;
        Ok(schedule)
    }
}

/// The parts of a spelling, as read: each at most once.
#[derive(Default)]
struct Parts {
    tile: (u32, u32, u32, u32),
    cluster: Option<(u32, u32)>,
    order: Option<Raster>,
    in_flight: Option<u32>,
    sub_cols: Option<u32>,
    buffers: Option<u32>,
    resident: Option<u32>,
    pingpong: Option<()>,
    queue: Option<Take>,
    prefetch: Option<u32>,
    one_staging: Option<()>,
    promotion: Option<L2Promotion>,
    hints: Option<CacheHints>,
    region_last: Option<()>,
    direct: Option<u32>,
    epilogue_warps: Option<()>,
    row_split: Option<()>,
    even: Option<()>,
    streamed: Option<()>,
    swap: Option<()>,
    swizzled_transpose: Option<()>,
}

/// `_v`'s letters and the eviction hints they spell: one table for the spelling and its parse.
const HINT_LETTERS: [(char, Option<CacheHint>); 4] = [
    ('n', None),
    ('e', Some(CacheHint::EvictNormal)),
    ('f', Some(CacheHint::EvictFirst)),
    ('l', Some(CacheHint::EvictLast)),
];

/// `_v`'s letter for an eviction hint.
fn hint_letter(h: Option<CacheHint>) -> char {
    HINT_LETTERS
        .iter()
        .find(|(_, hint)| *hint == h)
        .map_or('n', |(c, _)| *c)
}

/// The eviction hint `_v`'s letter spells, if it is one.
fn hint_of(c: char) -> Option<Option<CacheHint>> {
    HINT_LETTERS
        .iter()
        .find(|(letter, _)| *letter == c)
        .map(|(_, h)| *h)
}

/// The parts every spelling names, for the message about an unknown one.
const KNOWN: &str = "known: _cXxY, _h, _gG, _fN, _eE, _d2, _rR, _p, _q, _ql, _aN, _o, _lB, \
                     _vABD, _w, _uB, _x, _b, _n, _k, _t, _z";

/// Sets `slot` to `value` unless a part already set it: the part's name (`_e`) and a sentence.
fn once<T>(slot: &mut Option<T>, value: T, name: &str) -> Result<(), Refusal> {
    if slot.is_some() {
        return Err(Refusal::Spelling(format!(
            "`{name}` is given twice; each part is given at most once"
        )));
    }
    *slot = Some(value);
    Ok(())
}

/// A part's number, or the sentence `what` says it takes.
fn number(text: &str, what: &str) -> Result<u32, Refusal> {
    text.parse().map_err(|_| Refusal::Spelling(what.into()))
}

impl Parts {
    /// The parts `spec` spells, or why it spells none.
    fn read(spec: &str) -> Result<Parts, Refusal> {
        let syntax = |why: &str| Refusal::Spelling(why.into());
        let mut split = spec.split('_');
        let head = split.next().unwrap_or("");
        let start = "it starts with MxNxKsS, e.g. 128x256x64s3";
        let (dims, stages) = head.split_once('s').ok_or_else(|| syntax(start))?;
        let dims: Vec<u32> = dims
            .split('x')
            .map(|d| d.parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|_| syntax(start))?;
        let [m, n, k] = dims[..] else {
            return Err(syntax("the tile has three extents, MxNxK"));
        };
        let stages = number(stages, "S (stages) is a number")?;
        let mut p = Parts {
            tile: (m, n, k, stages),
            ..Parts::default()
        };
        for part in split {
            p.read_part(part)?;
        }
        Ok(p)
    }

    /// One `_`-separated part.
    fn read_part(&mut self, part: &str) -> Result<(), Refusal> {
        let order = "_h, _gG or _gm";
        match part {
            "t" => once(&mut self.swap, (), "_t"),
            "z" => once(&mut self.swizzled_transpose, (), "_z"),
            "p" => once(&mut self.pingpong, (), "_p"),
            "o" => once(&mut self.one_staging, (), "_o"),
            "b" => once(&mut self.row_split, (), "_b"),
            "x" => once(&mut self.epilogue_warps, (), "_x"),
            "q" => once(&mut self.queue, Take::Early, "_q"),
            "ql" => once(&mut self.queue, Take::Late, "_q"),
            "n" => once(&mut self.even, (), "_n"),
            "k" => once(&mut self.streamed, (), "_k"),
            "w" => once(&mut self.region_last, (), "_w"),
            "h" => once(&mut self.order, Raster::Hilbert, order),
            "gm" => once(&mut self.order, Raster::AlongM, order),
            _ => {
                let (letter, rest) = part.split_at(part.chars().next().map_or(0, char::len_utf8));
                match letter {
                    "c" => {
                        let xy = rest
                            .split_once('x')
                            .and_then(|(x, y)| Some((x.parse().ok()?, y.parse().ok()?)))
                            .ok_or_else(|| Refusal::Spelling("the cluster is _c{X}x{Y}".into()))?;
                        once(&mut self.cluster, xy, "_c")
                    }
                    "f" => {
                        let f = number(rest, "_f takes a number of batches")?;
                        once(&mut self.in_flight, f, "_f")
                    }
                    "a" => {
                        let a = number(rest, "_a takes a number of waves to prefetch")?;
                        once(&mut self.prefetch, a, "_a")
                    }
                    "e" => {
                        let e = number(rest, "_e takes a number of columns")?;
                        once(&mut self.sub_cols, e, "_e")
                    }
                    "d" => {
                        let d = number(rest, "_d takes a number of staging tiles")?;
                        once(&mut self.buffers, d, "_d")
                    }
                    "u" => {
                        let u = number(rest, "_u takes the bytes of each store of D: 4, 8 or 16")?;
                        once(&mut self.direct, u, "_u")
                    }
                    "r" => {
                        let r = number(rest, "_r takes a number of k-tiles")?;
                        once(&mut self.resident, r, "_r")
                    }
                    "l" => {
                        let l = rest
                            .parse()
                            .ok()
                            .and_then(L2Promotion::from_bytes)
                            .ok_or_else(|| {
                                Refusal::Spelling(
                                    "_l takes an L2 promotion of 0, 64, 128 or 256 bytes".into(),
                                )
                            })?;
                        once(&mut self.promotion, l, "_l")
                    }
                    "v" => {
                        let hints: Vec<Option<Option<CacheHint>>> =
                            rest.chars().map(hint_of).collect();
                        let [Some(a), Some(b), Some(d)] = hints[..] else {
                            return Err(Refusal::Spelling(
                                "_v takes three letters, A's, B's and D's L2 eviction hint: n \
                                 (none), e (evict normal), f (evict first) or l (evict last), \
                                 e.g. _vfnf"
                                    .into(),
                            ));
                        };
                        once(&mut self.hints, CacheHints { a, b, d }, "_v")
                    }
                    "g" => {
                        let group: u32 = number(rest, "_g takes a group size, or m")?;
                        if group == 0 {
                            return Err(Refusal::Group);
                        }
                        once(&mut self.order, Raster::Grouped { group }, order)
                    }
                    _ => Err(Refusal::Spelling(format!(
                        "unknown part `_{part}` ({KNOWN})"
                    ))),
                }
            }
        }
    }

    /// The schedule the parts make, or the part that has no place in it.
    fn build(self) -> Result<HopperSchedule, Refusal> {
        let (m, n, k, stages) = self.tile;
        let tile = Tile::new(m, n, k, stages)?;
        let cluster = match self.cluster {
            Some((x, y)) => Cluster::new(x, y)?,
            None => Cluster::One,
        };
        let in_flight = match self.in_flight.unwrap_or(0) {
            0 => InFlight::Zero,
            1 => InFlight::One,
            f => return Err(Refusal::InFlight(f)),
        };
        let b = match (self.resident.unwrap_or(0), self.prefetch.unwrap_or(0)) {
            (0, 0) => BPlacement::Ring,
            (0, a) => return Err(Refusal::Prefetch(a)),
            (r, a) => BPlacement::Resident(ResidentB::new(r, a)?),
        };
        let store = self.store()?;
        let consumers = if self.pingpong.is_some() {
            self.pingpong(b, store)?
        } else {
            self.cooperative(b, store)?
        };
        Ok(HopperSchedule {
            tile,
            cluster,
            in_flight,
            consumers,
            order: self.order.unwrap_or(Raster::Grouped { group: 8 }),
            l2: L2Policy {
                promotion: self.promotion.unwrap_or(L2Promotion::B128),
                hints: self.hints.unwrap_or(CacheHints::NONE),
            },
        })
    }

    /// How D is stored: `_u`, or through staging of `_e`'s columns, `_d`'s tiles.
    fn store(&self) -> Result<Store, Refusal> {
        let buffers = match self.buffers.unwrap_or(1) {
            1 => Buffers::One,
            2 => Buffers::Two,
            d => return Err(Refusal::Buffers(d)),
        };
        if let Some(bytes) = self.direct {
            let width = StoreWidth::from_bytes(bytes).ok_or(Refusal::DirectWidth(bytes))?;
            let staged = self.sub_cols.unwrap_or(0) > 0 || buffers == Buffers::Two;
            if staged || self.swap.is_some() || self.one_staging.is_some() {
                return Err(Refusal::DirectStaging);
            }
            if self.epilogue_warps.is_some() {
                return Err(Refusal::EpilogueWarps(
                    "D is stored from the registers (_u)",
                ));
            }
            return Ok(Store::Direct(width));
        }
        if self.epilogue_warps.is_some() {
            if self.sub_cols.is_some() || buffers == Buffers::Two {
                return Err(Refusal::EpilogueWarps(
                    "they take the whole tile at once, not sub-tiles (_e, _d2)",
                ));
            }
            return Ok(Store::EpilogueWarps);
        }
        Ok(Store::Tma(match (self.sub_cols.unwrap_or(0), buffers) {
            (0, Buffers::One) => SubTile::Whole,
            (0, Buffers::Two) => return Err(Refusal::TwoBuffers(1)),
            (cols, buffers) => SubTile::Columns(Columns::new(cols, buffers)?),
        }))
    }

    /// Ping-pong consumers (`_p`) and what is theirs.
    fn pingpong(&self, b: BPlacement, store: Store) -> Result<Consumers, Refusal> {
        if self.swap.is_some() {
            return Err(Refusal::PingPong);
        }
        if self.swizzled_transpose.is_some() {
            return Err(Refusal::SwizzledTranspose);
        }
        if self.region_last.is_some() {
            return Err(Refusal::PingPongRegion);
        }
        if self.streamed.is_some() {
            return Err(Refusal::Streamed);
        }
        let staging = match self.one_staging {
            Some(()) => Staging::Shared,
            None => Staging::Own,
        };
        let store = match store {
            Store::Tma(sub_tile) => PingPongStore::Tma { sub_tile, staging },
            Store::Direct(w) => PingPongStore::Direct(w),
            Store::EpilogueWarps => {
                return Err(Refusal::EpilogueWarps(
                    "ping-pong consumers (_p) each finish their own tiles under the other's \
                     main loop",
                ))
            }
        };
        let last_wave = match (self.even, self.row_split) {
            (None, None) => LastWave::AsIs,
            (Some(()), None) => LastWave::Evened,
            (None, Some(())) => LastWave::RowsSharedOut,
            (Some(()), Some(())) => return Err(Refusal::EvenedWaves),
        };
        Ok(Consumers::PingPong(PingPong {
            b,
            store,
            source: self.queue.map_or(TileSource::Static, TileSource::Queue),
            last_wave,
        }))
    }

    /// Cooperative consumers and what is theirs.
    fn cooperative(&self, b: BPlacement, store: Store) -> Result<Consumers, Refusal> {
        if self.one_staging.is_some() {
            return Err(Refusal::OneStaging);
        }
        if self.queue.is_some() {
            return Err(Refusal::Queue);
        }
        if self.row_split.is_some() {
            return Err(Refusal::RowSplit);
        }
        let operands = match self.swap {
            None if self.swizzled_transpose.is_some() => return Err(Refusal::SwizzledTranspose),
            None => Operands::AsGiven { b, store },
            Some(()) => {
                if b != BPlacement::Ring {
                    return Err(Refusal::ResidentB);
                }
                if store == Store::EpilogueWarps {
                    return Err(Refusal::EpilogueWarps(
                        "A and B are swapped (_t): the staging tile is D's transpose",
                    ));
                }
                if store != Store::Tma(SubTile::Whole) {
                    return Err(Refusal::SwappedSubTile);
                }
                Operands::Swapped(match self.swizzled_transpose {
                    Some(()) => TransposedStaging::Swizzled,
                    None => TransposedStaging::Plain,
                })
            }
        };
        Ok(Consumers::Cooperative(Cooperative {
            operands,
            stream_k: match self.region_last {
                Some(()) => StreamKRegion::Last,
                None => StreamKRegion::First,
            },
            waves: match (self.even, self.streamed) {
                (None, None) => Waves::AsMany,
                (Some(()), None) => Waves::Evened,
                (None, Some(())) => Waves::Streamed,
                (Some(()), Some(())) => return Err(Refusal::Streamed),
            },
        }))
    }
}
