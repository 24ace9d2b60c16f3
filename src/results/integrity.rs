//! A document's integrity: the SHA-256 of its content, which the JSON exporter writes into it
//! (`sha256`) and `history --import` checks, so that a run changed after peakbench wrote it (a
//! figure edited by hand, a file damaged on its way from another machine) is found out.

use super::Report;

impl Report {
    /// The SHA-256, in hex, of this document's content: its compact JSON without `sha256`.
    pub fn content_sha256(&self) -> String {
        use sha2::Digest;
        // The JSON goes straight into the hash, never whole in memory; a document that has a
        // hash (one read back) is hashed as a copy without it. Plain numbers, strings, lists
        // and maps: serialising cannot fail.
        let mut hasher = sha2::Sha256::new();
        let _ = match self.sha256 {
            None => serde_json::to_writer(&mut hasher, self),
            Some(_) => serde_json::to_writer(
                &mut hasher,
                &Report {
                    sha256: None,
                    ..self.clone()
                },
            ),
        };
        hasher
            .finalize()
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
