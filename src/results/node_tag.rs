//! Where a record was measured in a multi-node run.

use serde::{Deserialize, Serialize};

/// The node of a multi-node run a record comes from (absent on one machine).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeTag {
    /// The rank that measured the point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}
