//! The diagnosis's faults of the network: a TCP window below the bandwidth-delay product, lost
//! datagrams.

use super::*;
use crate::results::params::Proto;

/// The TCP window of the window's fault: a quarter of the bandwidth-delay product of the delay
/// line's 200 Mbit/s and 10 ms round trip (250 KB).
const WINDOW: u64 = 64 << 10;

/// A TCP stream through the delay line (5 ms each way, shaped to 200 Mbit/s) with a window
/// of a quarter of the bandwidth-delay product, against the same stream with the kernel's own
/// (autotuned) window; the point's peak is the shaped rate (`--link-gbps`).
pub(super) fn window(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let skip = base.clone();
    crate::verify::net::in_pair(
        c,
        |c, pair, server_ns| {
            let line = match crate::verify::net::delay_line(pair, server_ns) {
                Ok(line) => line,
                Err(why) => {
                    return Ok(Check {
                        reason: why,
                        ..base
                    });
                }
            };
            line.set_delay(crate::verify::net::DELAY);
            let tuns = crate::verify::names::tuns(std::process::id());
            if let Err(why) = pair.limit_rate_of(&tuns, crate::verify::net::RATE_BPS) {
                return Ok(Check {
                    reason: format!("cannot shape the delay line: {why}"),
                    ..base
                });
            }
            let gbps = crate::verify::net::RATE_BPS as f64 / 1e9;
            let clean = crate::verify::net::stream_to(crate::verify::net::TUN_SERVER, Proto::Tcp)
                .with(Setting::Number("link-gbps", gbps))
                .with_all(c.timing("duration"));
            let faulted = clean.clone().with(Setting::Bytes("window", WINDOW));
            let check = interleaved(
                c,
                base,
                (&clean, &faulted),
                &mut InTheLine,
                &format!(
                    "a TCP stream through a delay line of the run's ({} ms each way, tc tbf {} Mbit/s) with --window {}K, against the kernel's own window",
                    crate::verify::net::DELAY.as_millis(),
                    crate::verify::net::RATE_BPS / 1_000_000,
                    WINDOW >> 10
                ),
            );
            drop(line);
            check
        },
        |_, why| {
            Ok(Check {
                reason: why,
                ..skip
            })
        },
    )
}

/// The loss check's datagrams dropped (iptables' statistic match at the server's end of the
/// namespace pair) while the faulted point runs.
struct Dropping<'a> {
    pair: &'a crate::verify::sandbox::NetPair,
    dropping: bool,
}

impl Fault for Dropping<'_> {
    fn on(&mut self) -> Result<(), String> {
        self.pair
            .add_loss(crate::verify::net::LOSS)
            .map_err(|why| format!("cannot drop datagrams: {why}"))?;
        self.dropping = true;
        Ok(())
    }
    fn off(&mut self) -> anyhow::Result<()> {
        if std::mem::take(&mut self.dropping) {
            self.pair
                .remove_loss(crate::verify::net::LOSS)
                .map_err(|why| anyhow::anyhow!("cannot stop dropping datagrams: {why}"))?;
        }
        Ok(())
    }
}

/// A UDP stream sent at the loss check's 100 Mbit/s, which the link carries whole (its peak
/// given as a link a little faster, `--link-gbps` [`LOSS_LINK_GBPS`], where the stream runs at
/// about its peak), with 1 % of its datagrams dropped. The fault costs the stream 1 %: the
/// check is skipped, saying so, unless the host moves the stream's rate by more than a sixth.
pub(super) fn loss(c: &mut Checks, base: Check) -> anyhow::Result<Check> {
    let skip = base.clone();
    crate::verify::net::in_pair(
        c,
        |c, pair, _| {
            let bench = crate::verify::net::throughput(Proto::Udp)
                .with_all([
                    Setting::Bytes("message-size", crate::verify::net::UDP_PAYLOAD),
                    Setting::Rate(crate::verify::net::LOSS_SEND_BPS),
                    Setting::Number("link-gbps", LOSS_LINK_GBPS),
                ])
                .with_all(c.timing("duration"));
            interleaved(
                c,
                base,
                (&bench, &bench),
                &mut Dropping {
                    pair,
                    dropping: false,
                },
                &format!(
                    "iptables' statistic match dropped {} % of the datagrams at the server's end of a namespace pair of the run's while the faulted point ran",
                    crate::verify::net::LOSS * 100.0
                ),
            )
        },
        |_, why| {
            Ok(Check {
                reason: why,
                ..skip
            })
        },
    )
}

/// The link of the loss fault's stream: 100 Mbit/s of 1472-byte payloads take 103 Mbit/s of
/// Ethernet frames.
const LOSS_LINK_GBPS: f64 = 0.105;
