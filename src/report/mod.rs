//! Exporters: pure functions from a [`Report`](crate::results::Report) to bytes, one file per
//! format (and the charts the HTML page and the PNG export share), and the atomic file writing
//! that lets a run be interrupted without losing a point.

pub mod assignment;
pub mod bandwidth_levels;
pub mod c2c;
pub mod calibration;
pub mod card;
pub mod changes;
pub mod charts;
pub mod compare;
pub mod compare_page;
pub mod csv;
pub mod diagnosis;
pub mod findings;
mod grouping;
pub mod html;
pub mod json;
pub mod junit;
pub mod legend;
pub mod markdown;
pub mod matrix;
pub mod model;
mod net_conditions;
pub mod nodes;
mod notes;
pub mod numa;
pub mod peaks;
pub mod pivot;
pub mod plot;
pub mod rank;
mod rows;
pub mod side_by_side;
pub mod summary;
pub mod table;
pub mod trend;
pub mod verify;

pub(crate) use grouping::{distinct, group_by, grouped};
pub use grouping::{groups, reference_tools};
pub use notes::{
    concurrency_notes, littles_law_notes, notice_notes, peak_notes, percentile_notes,
    reference_gap_notes, setup_line, solve_notes,
};
pub(crate) use notes::{peak_inputs, source_name, unknown_points};
pub(crate) use rows::variant;
pub use rows::{Row, headers, row, variant_header};

use crate::results::ResultRecord;

/// The memory's matrices of a run: C2C's, then NUMA's.
pub fn mem_matrices(records: &[ResultRecord]) -> Vec<matrix::MatrixView> {
    let mut out = c2c::matrices(records);
    out.extend(numa::matrices(records));
    out
}

#[cfg(test)]
mod tests;
