//! A document's integrity: the SHA-256 of its content, which the JSON exporter writes into it
//! (`sha256`) and `history --import` checks, so that a run changed after peakbench wrote it (a
//! figure edited by hand, a file damaged on its way from another machine) is found out.

use super::Report;

impl Report {
    /// The SHA-256, in hex, of this document's content: its compact JSON without `sha256`.
    pub fn content_sha256(&self) -> String {
        // A document that has a hash (one read back) is hashed as a copy without it.
        match self.sha256 {
            None => sha256_of(self),
            Some(_) => sha256_of(&Report {
                sha256: None,
                ..self.clone()
            }),
        }
    }

    /// Checks the document's `sha256` against its content: `Ok` where they match or the
    /// document has none (written before it was kept); else what is wrong.
    pub fn check_sha256(&self) -> Result<(), String> {
        match &self.sha256 {
            Some(h) if *h != self.content_sha256() => Err(
                "its content does not match its sha256: it was changed after peakbench wrote it"
                    .into(),
            ),
            _ => Ok(()),
        }
    }
}

/// The SHA-256, in hex, of `value`'s compact JSON: streamed into the hash, never whole in
/// memory. Plain numbers, strings, lists and maps: serialising cannot fail (were it to, the
/// hash is of what was written, and the document's check fails).
pub fn sha256_of(value: &impl serde::Serialize) -> String {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    let _ = serde_json::to_writer(&mut hasher, value);
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
