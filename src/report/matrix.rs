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

impl MatrixView {
    /// The table and heatmap of `value(row, column)` (display units), each side named by
    /// `name`, `corner` over the row names: cells coloured from green (the best) to red, none
    /// where all are within 5 % of each other (two equal C2C pairs were once one red and one
    /// green for a 0.02 % difference).
    pub fn grid<K: Copy>(
        title: String,
        corner: &str,
        (rows, columns): (&[K], &[K]),
        name: impl Fn(K) -> String,
        value: impl Fn(K, K) -> Option<f64>,
        lower_is_better: bool,
    ) -> MatrixView {
        let all: Vec<f64> = (rows.iter())
            .flat_map(|&i| columns.iter().map(move |&j| (i, j)))
            .filter_map(|(i, j)| value(i, j))
            .collect();
        let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let apart = hi > lo * 1.05;
        let colour = super::nodes::shade(all.iter().copied(), lower_is_better);
        let shade = |v: Option<f64>| if apart { colour(v) } else { None };
        let mut headers = vec![corner.to_string()];
        headers.extend(columns.iter().map(|&j| name(j)));
        let table = (rows.iter())
            .map(|&i| {
                let mut row = vec![name(i)];
                row.extend(
                    columns
                        .iter()
                        .map(|&j| value(i, j).map_or("—".to_string(), crate::units::format_sig)),
                );
                row
            })
            .collect();
        let heat = (rows.iter())
            .map(|&i| columns.iter().map(|&j| shade(value(i, j))).collect())
            .collect();
        MatrixView {
            title,
            headers,
            rows: table,
            heat,
        }
    }
}
