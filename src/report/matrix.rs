//! A pair matrix as the reports show it: a table and a heatmap (node pairs of a multi-node
//! run, CPU pairs of C2C).

/// A pair matrix: its title, its table (a header row, then a row per source, its first cell
/// the source's name) and each cell's heat colour.
#[derive(Debug, Clone)]
pub struct MatrixView {
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// `heat[src][dst]`: the cell's background, where it has one.
    pub heat: Vec<Vec<Option<String>>>,
}
