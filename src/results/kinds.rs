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
