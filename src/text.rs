//! Text that came from outside (a peer, a file, the command line) made safe to print: control
//! characters (escape sequences, newlines, carriage returns, …) are shown as `\u{1b}`-style
//! escapes, so that nothing a stranger sends can move the cursor, clear the screen or forge a
//! line of output. Also the terminal's width, and text wrapped, cut or laid out in columns to
//! fit it.

/// `text` with every control character escaped.
pub fn printable(text: &str) -> String {
    if !text.chars().any(unprintable) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if unprintable(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Whether `c` is escaped by [`printable`]: a control character (Unicode's Cc: C0, DEL, C1,
/// ESC among them), a format character (Cf: the bidirectional overrides and isolates U+202A–
/// U+202E and U+2066–U+2069 that reorder what follows them, zero-width characters, the soft
/// hyphen, the byte-order mark, tags), or a line or paragraph separator (U+2028, U+2029). The
/// Cf ranges are Unicode 15.1's.
pub fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{0600}'..='\u{0605}'
                | '\u{061C}'
                | '\u{06DD}'
                | '\u{070F}'
                | '\u{0890}'..='\u{0891}'
                | '\u{08E2}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{110BD}'
                | '\u{110CD}'
                | '\u{13430}'..='\u{1343F}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0001}'
                | '\u{E0020}'..='\u{E007F}'
        )
}

/// `text` with every control character but the line feed and the tab escaped: several lines
/// (a tool's output, its columns) kept as they are, nothing in them able to move the cursor
/// but to the next line or column.
pub fn printable_lines(text: &str) -> String {
    text.split('\n')
        .map(|line| {
            line.split('\t')
                .map(printable)
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A list as a sentence says it: "a", "a or b", "a, b or c".
pub fn one_of<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let items: Vec<&str> = items.into_iter().collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// `text` for HTML and SVG content and attribute values: `&`, `<`, `>`, `"` and `'` as
/// entities.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The columns a terminal line may take: `COLUMNS` where it holds a number from 20 to 1000,
/// else the width of the terminal on standard output or standard error, else 100.
pub fn terminal_width() -> usize {
    if let Some(w) = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|w| (20..=1000).contains(w))
    {
        return w;
    }
    [libc::STDOUT_FILENO, libc::STDERR_FILENO]
        .into_iter()
        .find_map(tty_columns)
        .unwrap_or(100)
}

/// The width of the terminal on `fd`, if it is one.
fn tty_columns(fd: libc::c_int) -> Option<usize> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct it is given, which lives for the
    // call; on a descriptor that is no terminal it fails and writes nothing.
    let r = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut size) };
    (r == 0 && size.ws_col >= 20).then_some(usize::from(size.ws_col))
}

/// The columns `text` takes on a terminal (one per character: the text peakbench prints has
/// no wide characters).
pub fn width(text: &str) -> usize {
    text.chars().count()
}

/// `text` cut to `max` columns, its end replaced by "…" where it was cut.
pub fn truncate(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `text` wrapped at spaces into lines of at most `max` columns, each line after the first
/// starting with `indent`; a word longer than a line is cut at the line's end.
pub fn wrap(text: &str, max: usize, indent: &str) -> String {
    let max = max.max(width(indent) + 10);
    let mut lines: Vec<String> = Vec::new();
    // Leading spaces (an indented note) stay on the first line.
    let body = text.trim_start_matches(' ');
    let mut line = " ".repeat(text.len() - body.len());
    let mut words = 0;
    // A unit that is a sign of its own ("3 %") stays with its number.
    let mut tokens: Vec<String> = Vec::new();
    for word in body.split(' ') {
        match tokens.last_mut() {
            Some(last) if word.starts_with('%') && !last.is_empty() => {
                last.push(' ');
                last.push_str(word);
            }
            _ => tokens.push(word.to_string()),
        }
    }
    for word in &tokens {
        let needed = width(&line) + usize::from(words > 0) + width(word);
        if words > 0 && needed > max {
            lines.push(line);
            line = indent.to_string();
            words = 0;
        }
        if words > 0 {
            line.push(' ');
        }
        line.push_str(word);
        words += 1;
        // A word longer than a whole line is cut.
        while width(&line) > max {
            let head: String = line.chars().take(max).collect();
            let tail: String = line.chars().skip(max).collect();
            lines.push(head);
            line = format!("{indent}{tail}");
        }
    }
    lines.push(line);
    lines.join("\n")
}

/// How a column's cells are aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// Each column's width: its widest cell, the header's included.
fn natural_widths(header: &[String], rows: &[Vec<String>]) -> Vec<usize> {
    (0..header.len())
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .chain(std::iter::once(&header[i]))
                .map(|c| width(c))
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// Rows laid out in columns two spaces apart under a header, with no borders, in at most `max`
/// columns: where the table is wider, the widest left-aligned column is cut ("…") until it fits
/// or is down to 8 columns.
pub fn columns(header: &[String], rows: &[Vec<String>], align: &[Align], max: usize) -> String {
    let n = header.len();
    let mut widths = natural_widths(header, rows);
    let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * n.saturating_sub(1);
    while total(&widths) > max {
        let Some((i, _)) = widths
            .iter()
            .enumerate()
            .filter(|(i, w)| align.get(*i) == Some(&Align::Left) && **w > 8)
            .max_by_key(|(_, w)| **w)
        else {
            break;
        };
        widths[i] -= 1;
    }
    let line = |cells: &[String]| {
        let mut out = String::new();
        for (i, w) in widths.iter().enumerate() {
            let cell = truncate(cells.get(i).map_or("", String::as_str), *w);
            let pad = " ".repeat(w - width(&cell));
            if i > 0 {
                out.push_str("  ");
            }
            match align.get(i) {
                Some(Align::Right) => out.push_str(&format!("{pad}{cell}")),
                _ if i + 1 == n => out.push_str(&cell),
                _ => out.push_str(&format!("{cell}{pad}")),
            }
        }
        out.trim_end().to_string()
    };
    let mut out = line(header);
    out.push('\n');
    for r in rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}

/// Rows for a terminal too narrow for their columns: each row's first cell on lines of its
/// own, then its other cells as "header cell", wrapped and indented.
fn stacked(header: &[String], rows: &[Vec<String>], max: usize) -> String {
    let mut out = String::new();
    for row in rows {
        out.push_str(&wrap(row.first().map_or("", String::as_str), max, "  "));
        out.push('\n');
        let pairs: Vec<String> = header
            .iter()
            .zip(row)
            .skip(1)
            .filter(|(_, cell)| !cell.is_empty())
            .map(|(h, cell)| format!("{h} {cell}"))
            .collect();
        if pairs.is_empty() {
            continue;
        }
        // Pairs whole on a line where they fit: "Δ % -10.0" is not split.
        let mut line = String::from(" ");
        for (k, pair) in pairs.iter().enumerate() {
            let sep = if k + 1 < pairs.len() { "," } else { "" };
            if width(&line) > 2 && width(&line) + 1 + width(pair) + sep.len() > max {
                out.push_str(&wrap(&line, max, "    "));
                out.push('\n');
                line = String::from("   ");
            }
            line.push_str(&format!(" {pair}{sep}"));
        }
        out.push_str(&wrap(&line, max, "    "));
        out.push('\n');
    }
    out
}

/// [`columns`], where the columns listed in `wrapped` share the width the others leave (each
/// its natural width where that fits) and a cell too wide for its column goes on over the next
/// lines, its later lines indented by two, instead of being cut. Where even that cannot fit
/// `max`, each row is [`stacked`]. `max` is 20 or more, as [`terminal_width`] gives (below,
/// a line may be wider).
pub fn columns_wrapped(
    header: &[String],
    rows: &[Vec<String>],
    align: &[Align],
    max: usize,
    wrapped: &[usize],
) -> String {
    let widest = natural_widths(header, rows);
    let natural = |i: usize| widest[i];
    let wrapped: Vec<usize> = wrapped
        .iter()
        .copied()
        .filter(|i| *i < header.len())
        .collect();
    let fixed: usize = (0..header.len())
        .filter(|i| !wrapped.contains(i))
        .map(natural)
        .sum();
    let gaps = 2 * header.len().saturating_sub(1);
    // Each wrapped column needs 20 columns (or less where its cells are narrower): narrower,
    // its cells would take more lines than the row is worth.
    let least: usize = wrapped.iter().map(|&i| natural(i).min(20)).sum();
    if fixed + gaps + least > max {
        return stacked(header, rows, max);
    }
    let mut left = max - fixed - gaps;
    // The narrowest first: each takes its natural width or an equal share of what is left.
    let mut order: Vec<(usize, usize)> = wrapped.iter().map(|&i| (natural(i), i)).collect();
    order.sort_unstable();
    let mut widths = vec![0; header.len()];
    for (k, (want, i)) in order.iter().enumerate() {
        let share = left / (order.len() - k);
        widths[*i] = (*want).min(share).max(12);
        left = left.saturating_sub(widths[*i]);
    }
    let mut lines: Vec<Vec<String>> = Vec::new();
    for row in rows {
        let parts: Vec<Vec<String>> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                if wrapped.contains(&i) {
                    wrap(cell, widths[i], "  ")
                        .lines()
                        .map(str::to_string)
                        .collect()
                } else {
                    vec![cell.clone()]
                }
            })
            .collect();
        let height = parts.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            lines.push(
                parts
                    .iter()
                    .map(|p| p.get(k).cloned().unwrap_or_default())
                    .collect(),
            );
        }
    }
    columns(header, &lines, align, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool's output keeps its lines and columns; anything else that moves the cursor is
    /// escaped.
    #[test]
    fn output_keeps_lines_and_tabs_only() {
        let out = printable_lines("AVG\tCopy: 1 MiB/s\n\u{1b}[2J\rgone\n");
        assert_eq!(out, "AVG\tCopy: 1 MiB/s\n\\u{1b}[2J\\u{d}gone\n");
    }

    #[test]
    fn wrapping_and_cutting_keep_to_the_width() {
        let text = "peakbench run: profile quick — CPU DP/SP and LINPACK (N = 2000) on all threads, memory copy/triad and latency";
        let wrapped = wrap(text, 40, "  ");
        assert!(wrapped.lines().all(|l| width(l) <= 40), "{wrapped}");
        assert!(wrapped.lines().skip(1).all(|l| l.starts_with("  ")));
        assert_eq!(wrapped.replace("\n  ", " "), text);
        let long = wrap(&"x".repeat(95), 40, "  ");
        assert!(long.lines().all(|l| width(l) <= 40), "{long}");
        assert_eq!(wrap("short", 40, "  "), "short");
        assert_eq!(wrap("  note", 40, "    "), "  note");
        assert_eq!(
            wrap("worse by more than 3 %", 20, "  "),
            "worse by more than\n  3 %"
        );
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        let h = ["Workload".to_string(), "Variant".into(), "GOPS".into()];
        let rows = vec![vec![
            "DP".to_string(),
            "a very long variant text that goes on".into(),
            "115.9".into(),
        ]];
        let t = columns(&h, &rows, &[Align::Left, Align::Left, Align::Right], 30);
        assert!(t.lines().all(|l| width(l) <= 30), "{t}");
        assert!(t.contains('…') && t.contains("115.9"), "{t}");
        let t = columns_wrapped(
            &h,
            &rows,
            &[Align::Left, Align::Left, Align::Right],
            40,
            &[1],
        );
        assert!(t.lines().all(|l| width(l) <= 40), "{t}");
        assert!(!t.contains('…') && t.lines().count() > 2, "{t}");
        let narrow = columns_wrapped(
            &h,
            &rows,
            &[Align::Left, Align::Left, Align::Right],
            20,
            &[1],
        );
        assert!(narrow.lines().all(|l| width(l) <= 20), "{narrow}");
        assert!(
            narrow.starts_with("DP\n") && narrow.contains("115.9"),
            "{narrow}"
        );
        let first = t.lines().nth(1).unwrap();
        assert!(first.starts_with("DP") && first.ends_with("115.9"), "{t}");
        let mut words: Vec<&str> = t.lines().skip(1).flat_map(str::split_whitespace).collect();
        words.retain(|w| !["DP", "115.9"].contains(w));
        assert_eq!(
            words.join(" "),
            "a very long variant text that goes on",
            "{t}"
        );
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("node-1.example"), "node-1.example");
        assert_eq!(printable("évian 東京"), "évian 東京");
        let evil = "host\x1b[2J\r\nrank 0: all good\x07";
        let shown = printable(evil);
        assert!(!shown.chars().any(char::is_control), "{shown}");
        assert_eq!(shown, "host\\u{1b}[2J\\u{d}\\u{a}rank 0: all good\\u{7}");
        // Right-to-left overrides and isolates, zero-width and separators: escaped too.
        let evil = "file\u{202E}gpj.exe\u{2066}x\u{200B}y\u{2028}z\u{FEFF}\u{E0041}";
        assert_eq!(
            printable(evil),
            "file\\u{202e}gpj.exe\\u{2066}x\\u{200b}y\\u{2028}z\\u{feff}\\u{e0041}"
        );
        // Letters of right-to-left scripts are text, not format characters.
        assert_eq!(printable("שלום مرحبا"), "שלום مرحبا");
    }
}
