//! The shared secret of `net`, `net serve` and `cluster run`: on the command line, in
//! PEAKBENCH_TOKEN, or (out of sight of `ps`) in a file.

use crate::error::UsageError;
use clap::Args;
use std::path::PathBuf;

/// The largest token file read.
const MAX_TOKEN_FILE: u64 = 4096;

#[derive(Debug, Clone, Default, Args)]
pub struct TokenArgs {
    /// Shared secret: the other side must prove it knows the same one (mutual
    /// challenge-response; the token never crosses the wire).
    #[arg(long, env = "PEAKBENCH_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Read the shared secret from this file (its first line), out of sight of `ps`.
    #[arg(long, value_name = "FILE", conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
}

impl TokenArgs {
    /// The token given, if any; an empty one, or an unreadable file, is a usage error.
    pub fn token(&self) -> Result<Option<String>, UsageError> {
        let token = match (&self.token, &self.token_file) {
            (Some(t), _) => t.clone(),
            (None, Some(path)) => {
                let bytes = crate::files::read_input(
                    path,
                    MAX_TOKEN_FILE,
                    "put the token alone on the file's first line",
                )
                .map_err(|e| UsageError(format!("--token-file: {e}")))?;
                let text = String::from_utf8(bytes).map_err(|_| {
                    UsageError(format!(
                        "--token-file {}: the token is not UTF-8 text",
                        path.display()
                    ))
                })?;
                text.lines().next().unwrap_or_default().trim().to_string()
            }
            (None, None) => return Ok(None),
        };
        if token.is_empty() {
            return Err(UsageError(
                "the token is empty: give a non-empty --token, PEAKBENCH_TOKEN or --token-file"
                    .into(),
            ));
        }
        Ok(Some(token))
    }
}
