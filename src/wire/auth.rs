//! Proof of a shared token between two peers, and messages sealed with it; used by the network
//! benchmark's control connection and by the cluster coordinator.
//!
//! Mutual challenge-response: each side sends 32 random bytes (a nonce); each side proves it
//! knows the token with HMAC-SHA256(token, transcript), where the transcript names the
//! protocol, the speaker (who proves to whom) and both nonces, each length-prefixed. A proof is
//! therefore good for one connection and one direction only: replayed on another connection
//! (other nonces) or reflected back (other speaker) it fails. The token never crosses the wire.
//!
//! After the handshake, a session key HMAC(token, "session" transcript) can seal every
//! following message: a 32-byte tag HMAC(key, speaker ‖ sequence number ‖ body) follows the
//! body, so a message forged, altered, replayed, reordered or reflected is refused.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io;

type HmacSha256 = Hmac<Sha256>;

/// Bytes of a sealed message's tag.
pub const TAG_BYTES: usize = 32;
/// Hex digits of a nonce (32 random bytes).
pub const NONCE_HEX: usize = 64;

/// Who proves (or seals) to whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    /// The side that connected (a network client, a rank).
    Initiator,
    /// The side that accepted (a network server, the coordinator).
    Responder,
}

impl Speaker {
    fn label(self) -> &'static [u8] {
        match self {
            Speaker::Initiator => b"initiator->responder",
            Speaker::Responder => b"responder->initiator",
        }
    }
}

/// What a proof is bound to: the protocol and the connection's two nonces.
#[derive(Debug, Clone, Copy)]
pub struct Transcript<'a> {
    /// The protocol and its version, e.g. "peakbench-net-v3".
    pub protocol: &'static str,
    pub initiator_nonce: &'a str,
    pub responder_nonce: &'a str,
}

impl Transcript<'_> {
    fn mac(&self, token: &str, purpose: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(token.as_bytes()).expect("HMAC takes any key");
        for part in [
            self.protocol.as_bytes(),
            purpose,
            self.initiator_nonce.as_bytes(),
            self.responder_nonce.as_bytes(),
        ] {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        mac
    }

    /// `speaker`'s proof that it knows `token`, in hex.
    pub fn proof(&self, token: &str, speaker: Speaker) -> String {
        hex(&self.mac(token, speaker.label()).finalize().into_bytes())
    }

    /// Checks `speaker`'s proof in constant time.
    pub fn verify(&self, token: &str, speaker: Speaker, proof: &str) -> bool {
        let Some(bytes) = unhex(proof) else {
            return false;
        };
        self.mac(token, speaker.label())
            .verify_slice(&bytes)
            .is_ok()
    }

    /// The key that seals this connection's messages.
    pub fn session_key(&self, token: &str) -> [u8; 32] {
        self.mac(token, b"session key")
            .finalize()
            .into_bytes()
            .into()
    }
}

/// Seals and opens one connection's messages; each direction counts its own messages.
pub struct Sealer {
    key: [u8; 32],
    me: Speaker,
    sent: u64,
    received: u64,
}

impl Sealer {
    pub fn new(key: [u8; 32], me: Speaker) -> Sealer {
        Sealer {
            key,
            me,
            sent: 0,
            received: 0,
        }
    }

    fn tag(&self, speaker: Speaker, seq: u64, body: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(speaker.label());
        mac.update(&seq.to_be_bytes());
        mac.update(body);
        mac
    }

    /// Appends the tag of the next message this side sends.
    pub fn seal(&mut self, body: &mut Vec<u8>) {
        let tag = self.tag(self.me, self.sent, body).finalize().into_bytes();
        body.extend_from_slice(&tag);
        self.sent += 1;
    }

    /// Checks and removes the tag of the next message from the other side (None: forged,
    /// altered, replayed, out of order or reflected).
    pub fn open<'b>(&mut self, sealed: &'b [u8]) -> Option<&'b [u8]> {
        let split = sealed.len().checked_sub(TAG_BYTES)?;
        let (body, tag) = sealed.split_at(split);
        let other = match self.me {
            Speaker::Initiator => Speaker::Responder,
            Speaker::Responder => Speaker::Initiator,
        };
        self.tag(other, self.received, body)
            .verify_slice(tag)
            .ok()?;
        self.received += 1;
        Some(body)
    }
}

/// 32 random bytes from the kernel, in hex.
pub fn new_nonce() -> io::Result<String> {
    let mut bytes = [0u8; 32];
    fill_random(&mut bytes)?;
    Ok(hex(&bytes))
}

/// Fills `bytes` from the kernel's random source.
pub fn fill_random(bytes: &mut [u8]) -> io::Result<()> {
    let mut got = 0;
    while got < bytes.len() {
        // SAFETY: the pointer and length describe the unfilled tail of `bytes`.
        let n = unsafe { libc::getrandom(bytes[got..].as_mut_ptr().cast(), bytes.len() - got, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        } else {
            got += n as usize;
        }
    }
    Ok(())
}

/// A random 64-bit number (per-test cookies).
pub fn random_u64() -> io::Result<u64> {
    let mut b = [0u8; 8];
    fill_random(&mut b)?;
    Ok(u64::from_ne_bytes(b))
}

/// Whether `s` has the form of a nonce (so that a peer cannot pick an empty or huge one).
pub fn is_nonce(s: &str) -> bool {
    s.len() == NONCE_HEX && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || s.len() > 128 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn transcript<'a>(a: &'a str, b: &'a str) -> Transcript<'a> {
        Transcript {
            protocol: "peakbench-test-v1",
            initiator_nonce: a,
            responder_nonce: b,
        }
    }

    /// A proof is good only for its token, its direction and its two nonces: replayed on
    /// another connection or reflected to its sender it fails.
    #[test]
    fn a_proof_is_bound_to_both_nonces_and_its_direction() {
        let (a, b) = (new_nonce().unwrap(), new_nonce().unwrap());
        assert!(is_nonce(&a) && a != b);
        let t = transcript(&a, &b);
        let p = t.proof("secret", Speaker::Initiator);
        assert!(!p.contains("secret"));
        assert!(t.verify("secret", Speaker::Initiator, &p));
        assert!(!t.verify("other", Speaker::Initiator, &p));
        assert!(!t.verify("secret", Speaker::Responder, &p), "reflected");
        let c = new_nonce().unwrap();
        assert!(!transcript(&a, &c).verify("secret", Speaker::Initiator, &p));
        assert!(!transcript(&c, &b).verify("secret", Speaker::Initiator, &p));
        assert!(!transcript(&b, &a).verify("secret", Speaker::Initiator, &p));
        let other = Transcript {
            protocol: "peakbench-other-v1",
            ..t
        };
        assert!(!other.verify("secret", Speaker::Initiator, &p));
        assert!(!t.verify("secret", Speaker::Initiator, ""));
        assert!(!t.verify("secret", Speaker::Initiator, "zz"));
        // Length prefixes: moving bytes between the nonces changes the proof.
        assert_ne!(
            transcript("ab", "c").proof("k", Speaker::Initiator),
            transcript("a", "bc").proof("k", Speaker::Initiator)
        );
    }

    #[test]
    fn sealed_messages_are_refused_when_forged_replayed_or_reflected() {
        let (a, b) = (new_nonce().unwrap(), new_nonce().unwrap());
        let key = transcript(&a, &b).session_key("secret");
        let mut rank = Sealer::new(key, Speaker::Initiator);
        let mut coord = Sealer::new(key, Speaker::Responder);
        let mut m1 = b"first".to_vec();
        rank.seal(&mut m1);
        let mut m2 = b"second".to_vec();
        rank.seal(&mut m2);
        // Out of order, then in order.
        assert!(coord.open(&m2).is_none());
        assert_eq!(coord.open(&m1).unwrap(), b"first");
        // Replayed.
        assert!(coord.open(&m1).is_none());
        assert_eq!(coord.open(&m2).unwrap(), b"second");
        // Reflected: the coordinator's own message sent back to it.
        let mut r = b"reply".to_vec();
        coord.seal(&mut r);
        assert!(coord.open(&r).is_none());
        assert_eq!(rank.open(&r).unwrap(), b"reply");
        // Altered, truncated, or sealed with another token's key.
        let mut m3 = b"third".to_vec();
        rank.seal(&mut m3);
        let mut altered = m3.clone();
        altered[0] ^= 1;
        assert!(coord.open(&altered).is_none());
        assert!(coord.open(&m3[..10]).is_none());
        assert!(coord.open(&[]).is_none());
        let mut forged = b"third".to_vec();
        Sealer::new(transcript(&a, &b).session_key("guess"), Speaker::Initiator).seal(&mut forged);
        assert!(coord.open(&forged).is_none());
        assert_eq!(coord.open(&m3).unwrap(), b"third");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn arbitrary_proofs_and_sealed_bytes_are_refused_without_panic(
            proof in ".{0,140}",
            bytes in proptest::collection::vec(any::<u8>(), 0..128),
        ) {
            let t = transcript("a", "b");
            prop_assert!(!t.verify("k", Speaker::Responder, &proof));
            let mut s = Sealer::new(t.session_key("k"), Speaker::Responder);
            prop_assert!(s.open(&bytes).is_none());
        }
    }
}
