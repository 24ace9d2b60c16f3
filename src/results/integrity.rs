//! A document's integrity: the SHA-256 of its content, which the JSON exporter writes into it
//! (`sha256`) and `history --import` checks, so that a run changed after peakbench wrote it (a
//! figure edited by hand, a file damaged on its way from another machine) is found out.

use super::Report;

impl Report {
    /// The SHA-256, in hex, of this document's content: its compact JSON without `sha256`.
    pub fn content_sha256(&self) -> String {
        use sha2::Digest;
        let mut bare = self.clone();
        bare.sha256 = None;
        // Plain numbers, strings, lists and maps: serialising cannot fail.
        let bytes = serde_json::to_vec(&bare).unwrap_or_default();
        sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
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
