//! The typed ids of a record: which subsystem measured it, which metric it holds and in which
//! unit. Their serde names are the JSON document's strings (docs/json-schema.md), so the
//! schema reads and writes exactly as when they were strings; everything else compares the
//! enums.

use std::fmt;

/// An enum whose every variant has one name: `ALL`, `name()`, `Display` and `FromStr` (the
/// exact name or an alias, with a "use a, b or c" message), and serde under the same names.
/// `named_enum!(@shape …)` is the enum without `FromStr`, for enums parsed another way (the
/// workloads, in any case: `workload::spec::workloads!`).
macro_rules! named_enum {
    (@shape $(#[$m:meta])* $vis:vis enum $t:ident { $($(#[$vm:meta])* $v:ident = $n:literal $(| $alias:literal)*,)+ }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        $vis enum $t {
            $($(#[$vm])* #[serde(rename = $n $(, alias = $alias)*)] $v,)+
        }

        impl $t {
            /// Every variant, in declaration order.
            pub const ALL: [$t; [$($n),+].len()] = [$($t::$v),+];

            /// Its name in the JSON document and on the command line.
            pub const fn name(self) -> &'static str {
                match self {
                    $($t::$v => $n,)+
                }
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
    ($(#[$m:meta])* $vis:vis enum $t:ident { $($(#[$vm:meta])* $v:ident = $n:literal $(| $alias:literal)*,)+ }) => {
        $crate::ids::named_enum! {
            @shape $(#[$m])* $vis enum $t { $($(#[$vm])* $v = $n $(| $alias)*,)+ }
        }

        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<$t, String> {
                match s {
                    $($n $(| $alias)* => Ok($t::$v),)+
                    _ => Err(format!(
                        "'{}' is not a {}; use {}",
                        crate::text::printable(s),
                        stringify!($t).to_lowercase(),
                        crate::text::one_of($t::ALL.iter().map(|v| v.name()))
                    )),
                }
            }
        }
    };
}

pub(crate) use named_enum;

named_enum! {
    /// The part of the machine a record measures.
    pub enum Subsystem {
        Cpu = "cpu",
        Mem = "mem",
        Disk = "disk",
        Net = "net",
    }
}

impl Subsystem {
    /// Its name in a sentence or a heading: "CPU", "Memory", "Disk", "Network".
    pub const fn title(self) -> &'static str {
        match self {
            Subsystem::Cpu => "CPU",
            Subsystem::Mem => "Memory",
            Subsystem::Disk => "Disk",
            Subsystem::Net => "Network",
        }
    }

    /// Its place in [`Subsystem::ALL`], for tables indexed by subsystem.
    pub const fn index(self) -> usize {
        self as usize
    }
}

named_enum! {
    /// What a record's figures are.
    pub enum Metric {
        /// Operations, bytes or bits per second.
        Throughput = "throughput",
        /// I/O operations per second.
        Iops = "iops",
        /// The time of one operation or round trip.
        Latency = "latency",
        /// Datagrams lost, in per cent.
        Loss = "loss",
        /// Variation of a datagram's transit time.
        Jitter = "jitter",
        /// Transactions per second.
        Rate = "rate",
    }
}

impl Metric {
    /// Whether a smaller figure is the better one (latency, loss, jitter).
    pub const fn lower_is_better(self) -> bool {
        matches!(self, Metric::Latency | Metric::Loss | Metric::Jitter)
    }

    /// How close `mean` comes to `peak` (1 = the peak): mean ÷ peak where higher is better,
    /// peak ÷ mean where lower is (a latency's peak is the least time).
    pub fn efficiency(self, mean: f64, peak: f64) -> f64 {
        if self.lower_is_better() {
            peak / mean
        } else {
            mean / peak
        }
    }
}

named_enum! {
    /// The unit of a figure: a base unit (what the JSON document stores since schema version
    /// 4), or a prefixed one that a benchmark states or a table shows.
    pub enum Unit {
        /// Operations per second.
        OpsPerSec = "op/s",
        /// Bytes per second.
        BytesPerSec = "B/s",
        /// Bits per second (network goodput).
        BitsPerSec = "bit/s",
        /// Seconds (latency, jitter).
        Seconds = "s",
        Iops = "IOPS",
        TransPerSec = "trans/s",
        Percent = "%",
        Gops = "GOPS",
        GBPerSec = "GB/s",
        MBPerSec = "MB/s",
        MiBPerSec = "MiB/s",
        GiBPerSec = "GiB/s",
        MbitPerSec = "Mbit/s",
        GbitPerSec = "Gbit/s",
        Nanos = "ns",
        Micros = "µs" | "us",
        Millis = "ms",
        /// Bytes (an amount: a burst's volume).
        Bytes = "B",
    }
}

/// The units a record stores its figures in: those without a prefix.
pub type BaseUnit = Unit;

impl Unit {
    /// The base unit of a prefixed unit and the factor from one to the other (value in base =
    /// value × factor); `None` for a unit that is a base unit already.
    pub const fn to_base(self) -> Option<(Unit, f64)> {
        Some(match self {
            Unit::Gops => (Unit::OpsPerSec, 1e9),
            Unit::GBPerSec => (Unit::BytesPerSec, 1e9),
            Unit::MBPerSec => (Unit::BytesPerSec, 1e6),
            Unit::MiBPerSec => (Unit::BytesPerSec, 1_048_576.0),
            Unit::GiBPerSec => (Unit::BytesPerSec, 1_073_741_824.0),
            Unit::MbitPerSec => (Unit::BitsPerSec, 1e6),
            Unit::GbitPerSec => (Unit::BitsPerSec, 1e9),
            Unit::Nanos => (Unit::Seconds, 1e-9),
            Unit::Micros => (Unit::Seconds, 1e-6),
            Unit::Millis => (Unit::Seconds, 1e-3),
            Unit::OpsPerSec
            | Unit::BytesPerSec
            | Unit::BitsPerSec
            | Unit::Seconds
            | Unit::Iops
            | Unit::TransPerSec
            | Unit::Percent
            | Unit::Bytes => return None,
        })
    }

    /// Whether it has no prefix.
    pub const fn is_base(self) -> bool {
        self.to_base().is_none()
    }

    /// Whether it counts time (a latency's or a jitter's unit).
    pub const fn is_time(self) -> bool {
        matches!(
            self,
            Unit::Seconds | Unit::Nanos | Unit::Micros | Unit::Millis
        )
    }
}

/// A reference tool peakbench knows how to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tool {
    LikwidBench,
    Stream,
    Fio,
    Iperf3,
    Sockperf,
    Qperf,
    Ping,
    Hpcc,
    Sysbench,
    Mbw,
    Dd,
    Blis,
}

impl Tool {
    /// Every tool, in the order `reference check` lists them.
    pub const ALL: [Tool; 12] = [
        Tool::LikwidBench,
        Tool::Stream,
        Tool::Sysbench,
        Tool::Mbw,
        Tool::Fio,
        Tool::Dd,
        Tool::Iperf3,
        Tool::Sockperf,
        Tool::Qperf,
        Tool::Ping,
        Tool::Hpcc,
        Tool::Blis,
    ];

    /// The name shown in reports (and in `Reference::tool`).
    pub fn name(self) -> &'static str {
        match self {
            Tool::LikwidBench => "likwid-bench",
            Tool::Stream => "STREAM",
            Tool::Fio => "fio",
            Tool::Iperf3 => "iperf3",
            Tool::Sockperf => "sockperf",
            Tool::Qperf => "qperf",
            Tool::Ping => "ping",
            Tool::Hpcc => "HPL (hpcc)",
            Tool::Sysbench => "sysbench",
            Tool::Mbw => "mbw",
            Tool::Dd => "dd",
            Tool::Blis => "BLIS",
        }
    }

    /// Whether it runs beside a point's preferred tool as a second opinion: not hpcc, which
    /// runs its whole suite (HPL, PTRANS, RandomAccess, FFT, STREAM…) for one figure and is
    /// a memory point's reference only where no lighter tool measures it.
    pub fn runs_beside(self) -> bool {
        !matches!(self, Tool::Hpcc)
    }

    /// The executable looked up on PATH.
    pub fn program(self) -> &'static str {
        match self {
            Tool::LikwidBench => "likwid-bench",
            Tool::Stream => "stream",
            Tool::Fio => "fio",
            Tool::Iperf3 => "iperf3",
            Tool::Sockperf => "sockperf",
            Tool::Qperf => "qperf",
            Tool::Ping => "ping",
            Tool::Hpcc => "hpcc",
            Tool::Sysbench => "sysbench",
            Tool::Mbw => "mbw",
            Tool::Dd => "dd",
            // A library, not a program: found where Debian's alternatives put it
            // (reference::blis::library), and run through `peakbench cpu --blas system`.
            Tool::Blis => "libblis.so.4",
        }
    }

    /// How to get the tool on Debian.
    pub fn install(self) -> &'static str {
        match self {
            Tool::LikwidBench => "apt-get install likwid",
            Tool::Stream => {
                "build stream.c from https://www.cs.virginia.edu/stream/ with -fopenmp; \
                 put it on PATH as `stream` or set PEAKBENCH_STREAM"
            }
            Tool::Fio => "apt-get install fio",
            Tool::Iperf3 => "apt-get install iperf3",
            Tool::Sockperf => "apt-get install sockperf",
            Tool::Qperf => "apt-get install qperf",
            Tool::Ping => "apt-get install iputils-ping",
            Tool::Hpcc => "apt-get install hpcc openmpi-bin libopenblas0-serial",
            Tool::Sysbench => "apt-get install sysbench",
            Tool::Mbw => "apt-get install mbw",
            Tool::Dd => "apt-get install coreutils",
            Tool::Blis => "apt-get install libblis4-pthread",
        }
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_documents_strings() {
        for (v, json) in [
            (serde_json::to_string(&Subsystem::Mem).unwrap(), "\"mem\""),
            (serde_json::to_string(&Metric::Iops).unwrap(), "\"iops\""),
            (serde_json::to_string(&Unit::Micros).unwrap(), "\"µs\""),
            (
                serde_json::to_string(&Unit::BitsPerSec).unwrap(),
                "\"bit/s\"",
            ),
        ] {
            assert_eq!(v, json);
        }
        let us: Unit = serde_json::from_str("\"us\"").unwrap();
        assert_eq!(us, Unit::Micros);
        for u in Unit::ALL {
            let back: Unit = serde_json::from_str(&serde_json::to_string(&u).unwrap()).unwrap();
            assert_eq!(back, u);
            assert_eq!(u.name().parse::<Unit>(), Ok(u));
        }
    }

    #[test]
    fn an_unknown_name_says_what_to_use() {
        let e = "hdd".parse::<Subsystem>().unwrap_err();
        assert!(
            e.contains("'hdd' is not a subsystem; use cpu, mem, disk or net"),
            "{e}"
        );
        assert!(serde_json::from_str::<Metric>("\"speed\"").is_err());
    }

    #[test]
    fn lower_is_better_for_times_and_losses() {
        let lower: Vec<Metric> = Metric::ALL
            .iter()
            .copied()
            .filter(|m| m.lower_is_better())
            .collect();
        assert_eq!(lower, [Metric::Latency, Metric::Loss, Metric::Jitter]);
        assert_eq!(Metric::Latency.efficiency(200.0, 100.0), 0.5);
        assert_eq!(Metric::Throughput.efficiency(50.0, 100.0), 0.5);
    }

    #[test]
    fn prefixed_units_go_to_their_base() {
        assert_eq!(Unit::Micros.to_base(), Some((Unit::Seconds, 1e-6)));
        assert_eq!(
            Unit::MiBPerSec.to_base(),
            Some((Unit::BytesPerSec, 1_048_576.0))
        );
        assert!(Unit::Iops.is_base() && Unit::OpsPerSec.is_base());
        assert!(!Unit::Gops.is_base());
    }
}
