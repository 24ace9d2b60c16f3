//! What a network table's conditions line says beyond its points: the server, the transports,
//! the socket options asked of both ends and what the kernels gave, and whether zero-copy sends
//! were copied after all.

use crate::results::params::NetParams;
use crate::results::socket::SocketOptions;
use crate::units::format_bytes_binary;

/// The conditions of the network points `ns`, each a short phrase.
pub fn of(ns: &[&NetParams]) -> Vec<String> {
    let mut parts = Vec::new();
    let join = |v: Vec<String>| -> Option<String> {
        let mut v = v;
        v.sort();
        v.dedup();
        (!v.is_empty()).then(|| v.join(", "))
    };
    if let Some(v) = join(ns.iter().filter_map(|n| n.server.clone()).collect()) {
        parts.push(format!("server {}", crate::text::printable(&v)));
    }
    if let Some(v) = join(ns.iter().map(|n| n.protocol.name().to_string()).collect()) {
        parts.push(v);
    }
    let range = |vals: Vec<u64>| -> Option<String> {
        let (lo, hi) = (*vals.iter().min()?, *vals.iter().max()?);
        Some(if lo == hi {
            format_bytes_binary(lo)
        } else {
            format!("{}–{}", format_bytes_binary(lo), format_bytes_binary(hi))
        })
    };
    let send = range(ns.iter().filter_map(|n| n.send_buffer_bytes).collect());
    let receive = range(ns.iter().filter_map(|n| n.receive_buffer_bytes).collect());
    if let (Some(s), Some(r)) = (send, receive) {
        parts.push(format!(
            "client socket buffers at the end of a test: send {s}, receive {r}"
        ));
    }
    if let Some(v) = join(
        ns.iter()
            .filter_map(|n| n.socket_options.as_ref().map(asked))
            .collect(),
    ) {
        parts.push(format!("asked of every data socket: {v}"));
    }
    let gave =
        |f: &dyn Fn(&NetParams) -> Option<String>| join(ns.iter().filter_map(|n| f(n)).collect());
    let congestion = gave(&|n| {
        n.socket_options?.congestion?;
        Some(n.client_socket.as_ref()?.congestion?.to_string())
    });
    let mss = gave(&|n| {
        n.socket_options?.mss_bytes?;
        Some(format!("{} B", n.client_socket.as_ref()?.mss_bytes?))
    });
    if let Some(v) = congestion {
        parts.push(format!("congestion control in use: {v}"));
    }
    if let Some(v) = mss {
        parts.push(format!("MSS in use: {v}"));
    }
    // Each point once (its sender's record), both ends (either may send).
    let (sends, copied) = ns
        .iter()
        .filter(|n| n.side == Some(crate::results::params::Side::Sender))
        .flat_map(|n| [n.client_socket.as_deref(), n.server_socket.as_deref()])
        .flatten()
        .filter_map(|s| Some((s.zerocopy_sends?, s.zerocopy_copied?)))
        .fold((0u64, 0u64), |(a, b), (s, c)| (a + s, b + c));
    if sends > 0 {
        parts.push(format!(
            "zero-copy sends: the kernel copied {copied} of {sends} after all{}",
            if copied == sends {
                " (no gain: loopback and veth cannot hand pinned pages to a receiver)"
            } else {
                ""
            }
        ));
    }
    parts
}

/// The options asked, as a user types them.
fn asked(o: &SocketOptions) -> String {
    let mut v = Vec::new();
    if let Some(w) = o.window_bytes {
        v.push(format!("--window {}", format_bytes_binary(w.into())));
    }
    if let Some(c) = o.congestion {
        v.push(format!("--congestion {c}"));
    }
    if let Some(m) = o.mss_bytes {
        v.push(format!("--mss {m}"));
    }
    if let Some(d) = o.nodelay {
        v.push(format!("--no-delay {}", if d { "on" } else { "off" }));
    }
    if o.zerocopy {
        v.push("--zerocopy".into());
    }
    v.join(" ")
}
