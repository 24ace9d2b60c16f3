//! The kinds a record's parameters take that are one of a few names: enums whose serde names
//! are the JSON document's strings (declared by the ids' `named_enum!`).

crate::ids::named_enum! {
    /// How a disk point's I/O goes: `direct` (O_DIRECT) or `buffered` (the page cache).
    pub enum IoMode {
        Direct = "direct",
        Buffered = "buffered",
    }
}

crate::ids::named_enum! {
    /// In which order blocks or loads are visited.
    pub enum Order {
        Sequential = "sequential",
        Random = "random",
    }
}

crate::ids::named_enum! {
    /// In which order a disk point visits the blocks of its region: in sequence, at random,
    /// from the end back to the start (IOzone's read backwards), or one block every
    /// `stride_blocks` (IOzone's stride read).
    pub enum IoPattern {
        Sequential = "sequential",
        Random = "random",
        Backward = "backward",
        Stride = "stride",
    }
}

crate::ids::named_enum! {
    /// The store instructions of a memory kernel: non-temporal, regular, or none (it reads).
    pub enum StoreKind {
        Nt = "nt",
        Regular = "regular",
        None = "none",
    }
}

crate::ids::named_enum! {
    /// The pages a memory point's buffers got: transparent huge pages or 4 KiB pages.
    pub enum Pages {
        Thp = "thp",
        Small = "4k",
    }
}

crate::ids::named_enum! {
    /// Which end of a network test a record is of.
    pub enum Side {
        Receiver = "receiver",
        Sender = "sender",
        /// The ping-pong's client (round trips).
        Client = "client",
    }
}

crate::ids::named_enum! {
    /// The arithmetic of a LINPACK, DGEMM or SGEMM point: peakbench's own, or an installed
    /// BLAS/LAPACK (`--blas system`).
    pub enum LinalgEngine {
        BuiltIn = "built-in",
        System = "system",
    }
}

crate::ids::named_enum! {
    /// Which way a network test's payload goes.
    pub enum Direction {
        ClientToServer = "client to server",
        /// `--reverse`: the server sends.
        ServerToClient = "server to client (--reverse)",
        /// `--bidir`: each way's own figures, while the other way runs too, and their sum.
        BidirClientToServer = "client to server, both ways at once (--bidir)",
        BidirServerToClient = "server to client, both ways at once (--bidir)",
        BidirSum = "both ways at once, summed (--bidir)",
    }
}

crate::ids::named_enum! {
    /// What a CONNECT latency record times: the connect alone, or the whole connection
    /// (connect, request, response, close).
    pub enum ConnectPhase {
        Connect = "connect",
        Whole = "whole connection",
    }
}

crate::ids::named_enum! {
    /// How the links between the nodes of a multi-node run were tested.
    pub enum LinkPattern {
        /// Every ordered pair, in rounds of disjoint pairs.
        Pairs = "pairs",
        /// A node to itself, through its own address.
        OwnStack = "self",
        /// Every node to the next at once.
        Ring = "ring",
        /// One half of the nodes to the other at once.
        Bisection = "bisection",
    }
}

impl LinkPattern {
    /// Whether its links are tested one pair at a time (their round trips are meaningful);
    /// ring and bisection load every link at once, their figure is throughput.
    pub fn one_at_a_time(self) -> bool {
        matches!(self, LinkPattern::Pairs | LinkPattern::OwnStack)
    }
}

crate::ids::named_enum! {
    /// How a memory bandwidth point counts its bytes.
    pub enum ByteCounting {
        /// As STREAM does: what the kernel reads and writes, no write-allocate traffic.
        Stream = "STREAM: bytes read + bytes written, no write-allocate",
    }
}

/// A plateau of the latency staircase: a data cache's level, or memory (the first plateau past
/// the caches is 1; a later one, 2…, comes from page walks: TLB reach, not another cache).
/// Written `L2`, `memory`, `memory-2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelKind {
    Cache(u32),
    Memory(usize),
}

impl std::fmt::Display for LevelKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LevelKind::Cache(l) => write!(f, "L{l}"),
            LevelKind::Memory(1) => f.write_str("memory"),
            LevelKind::Memory(k) => write!(f, "memory-{k}"),
        }
    }
}

impl std::str::FromStr for LevelKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "'{}' is not a level: use L1, L2…, memory or memory-2…",
                crate::text::printable(s)
            )
        };
        if let Some(n) = s.strip_prefix('L') {
            return n.parse().map(LevelKind::Cache).map_err(|_| bad());
        }
        match s.strip_prefix("memory") {
            Some("") => Ok(LevelKind::Memory(1)),
            Some(n) => n
                .strip_prefix('-')
                .and_then(|n| n.parse().ok())
                .map(LevelKind::Memory)
                .ok_or_else(bad),
            None => Err(bad()),
        }
    }
}

/// What a memory latency point is: a step of the staircase, a level found on it, or a probe of
/// independent loads of one size (`seq-8B`, `random-1B`). Documents from before the staircase
/// named its levels have `memory` for the memory plateau.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    Chase,
    Level,
    Op {
        order: Order,
        bytes: u64,
    },
    Memory,
    /// A cache line's round trip between two CPUs (the C2C workload).
    C2c,
    /// A chase beside traffic at an injection delay (the LOADED workload).
    Loaded,
    /// A cell of the node matrices (the NUMA workload).
    Numa,
}

impl std::fmt::Display for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Probe::Chase => f.write_str("chase"),
            Probe::Level => f.write_str("level"),
            Probe::Memory => f.write_str("memory"),
            Probe::C2c => f.write_str("c2c"),
            Probe::Loaded => f.write_str("loaded"),
            Probe::Numa => f.write_str("numa"),
            Probe::Op { order, bytes } => {
                let order = match order {
                    Order::Sequential => "seq",
                    Order::Random => "random",
                };
                write!(f, "{order}-{bytes}B")
            }
        }
    }
}

impl std::str::FromStr for Probe {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let op = |order, rest: &str| {
            let bytes = rest.strip_suffix('B')?.parse().ok()?;
            Some(Probe::Op { order, bytes })
        };
        let probe = match s {
            "chase" => Some(Probe::Chase),
            "level" => Some(Probe::Level),
            "memory" => Some(Probe::Memory),
            "c2c" => Some(Probe::C2c),
            "loaded" => Some(Probe::Loaded),
            "numa" => Some(Probe::Numa),
            _ => s
                .strip_prefix("seq-")
                .and_then(|r| op(Order::Sequential, r))
                .or_else(|| s.strip_prefix("random-").and_then(|r| op(Order::Random, r))),
        };
        probe.ok_or_else(|| {
            let s = crate::text::printable(s);
            format!(
                "'{s}' is not a probe: use chase, level, c2c, loaded, numa, seq-NB or random-NB"
            )
        })
    }
}

/// Serde as the text that `Display` writes and `FromStr` reads.
macro_rules! serde_as_text {
    ($($t:ty),*) => {$(
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    )*};
}
serde_as_text!(LevelKind, Probe);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_and_levels_read_back_what_they_write() {
        for text in ["chase", "level", "memory", "seq-1B", "random-8B", "seq-64B"] {
            assert_eq!(text.parse::<Probe>().unwrap().to_string(), text);
        }
        for text in ["L1", "L3", "memory", "memory-2"] {
            assert_eq!(text.parse::<LevelKind>().unwrap().to_string(), text);
        }
        for bad in ["", "seq-", "seq-8", "random-xB", "Chase", "seq-8B\u{1b}[2J"] {
            let e = bad.parse::<Probe>().unwrap_err();
            assert!(!e.contains('\u{1b}'), "{e}");
        }
        for bad in ["", "L", "Lx", "memory-", "memory2", "l1"] {
            assert!(bad.parse::<LevelKind>().is_err(), "{bad}");
        }
    }
}

/// A read/write mix of memory traffic: arrays read and arrays written per element, in lowest
/// terms — Intel MLC's "ALL Reads" (1:0), "3:1", "2:1" and "1:1 Reads-Writes", and all writes
/// (0:1). The JSON writes it "R:W".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mix {
    pub reads: u8,
    pub writes: u8,
}

impl Mix {
    /// Only loads.
    pub const ALL_READS: Mix = Mix {
        reads: 1,
        writes: 0,
    };
    /// MLC's `--max_bandwidth` mixes, in its order.
    pub const MLC: [Mix; 4] = [
        Mix::ALL_READS,
        Mix {
            reads: 3,
            writes: 1,
        },
        Mix {
            reads: 2,
            writes: 1,
        },
        Mix {
            reads: 1,
            writes: 1,
        },
    ];

    /// Arrays a mix's pass touches.
    pub fn arrays(self) -> u64 {
        self.reads as u64 + self.writes as u64
    }

    /// "R:W" (integers up to 1000, in any multiple: 2:2 is 1:1), reduced; a kernel reads up to
    /// three arrays and writes at most one per element.
    pub fn parse(s: &str) -> Result<Mix, String> {
        const WHAT: &str = "a mix is reads:writes per element, up to 3 reads and 1 write: 1:0, 3:1, 2:1, 1:1 or 0:1";
        let (r, w) = s
            .trim()
            .split_once(':')
            .ok_or_else(|| format!("{:?} is not R:W; {WHAT}", crate::text::printable(s)))?;
        let number = |t: &str| t.trim().parse::<u32>().ok().filter(|n| *n <= 1000);
        let (Some(r), Some(w)) = (number(r), number(w)) else {
            return Err(format!(
                "{:?} is not two whole numbers up to 1000; {WHAT}",
                crate::text::printable(s)
            ));
        };
        let g = gcd(r, w);
        if g == 0 {
            return Err(format!("0:0 moves nothing; {WHAT}"));
        }
        let (r, w) = (r / g, w / g);
        if r > 3 || w > 1 {
            return Err(format!("{r}:{w} is not one of the kernels' mixes; {WHAT}"));
        }
        Ok(Mix {
            reads: r as u8,
            writes: w as u8,
        })
    }

    /// As MLC names it: "all reads", "all writes", "3:1 reads-writes".
    pub fn words(self) -> String {
        match (self.reads, self.writes) {
            (_, 0) => "all reads".into(),
            (0, _) => "all writes".into(),
            (r, w) => format!("{r}:{w} reads-writes"),
        }
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl std::fmt::Display for Mix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.reads, self.writes)
    }
}

impl serde::Serialize for Mix {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Mix {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Mix::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod mix_tests {
    use super::Mix;

    #[test]
    fn mixes_parse_reduced_and_refuse_what_no_kernel_moves() {
        assert_eq!(Mix::parse("1:0"), Ok(Mix::ALL_READS));
        assert_eq!(
            Mix::parse(" 6 : 2 ").map(|m| m.to_string()),
            Ok("3:1".into())
        );
        assert_eq!(Mix::parse("2:2").map(|m| m.to_string()), Ok("1:1".into()));
        assert_eq!(Mix::parse("0:5").map(|m| m.to_string()), Ok("0:1".into()));
        for bad in [
            "", "3", "0:0", "4:1", "3:2", "a:b", "-1:1", "1001:1", "1:1:1", "1:\u{1b}",
        ] {
            let e = Mix::parse(bad).unwrap_err();
            assert!(e.contains("1:0, 3:1"), "{bad}: {e}");
            assert!(!e.contains('\u{1b}'), "{bad}: {e}");
        }
        assert_eq!(Mix::MLC.map(|m| m.words())[1], "3:1 reads-writes");
        assert_eq!(Mix::ALL_READS.words(), "all reads");
        let json = serde_json::to_string(&Mix::MLC[2]).unwrap();
        assert_eq!(json, "\"2:1\"");
        assert_eq!(serde_json::from_str::<Mix>(&json).unwrap(), Mix::MLC[2]);
    }
}
