//! Small readers for sysfs and procfs files, and the CPU-list format of sysfs ("0-3,8,10-11").

use std::path::Path;

/// Reads a file and trims it; `None` when it is missing or unreadable.
pub fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// A file's text, or None when it is missing, unreadable, larger than `max` bytes or not UTF-8
/// (a procfs or sysfs file is small; a larger one is not what it should be).
pub fn read_bounded(path: impl AsRef<Path>, max: u64) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > max {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// Parses a sysfs CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

/// Parses a sysfs cache size such as `32K`, `1024K`, `32768K` (binary kibibytes).
pub fn parse_cache_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.as_bytes().last()? {
        b'K' => (&t[..t.len() - 1], 1024),
        b'M' => (&t[..t.len() - 1], 1024 * 1024),
        b'G' => (&t[..t.len() - 1], 1024 * 1024 * 1024),
        _ => (t, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// A `key: value` line of /proc/cpuinfo or /proc/meminfo, first occurrence.
pub fn proc_field(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// CPUs as sysfs lists them (the inverse of [`parse_cpu_list`]): "0-3,8,10-11".
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(cpu_list(&[]), "");
        assert_eq!(
            parse_cpu_list("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(parse_cpu_list("3-1"), None);
    }

    #[test]
    fn cache_sizes() {
        assert_eq!(parse_cache_size("32K"), Some(32 * 1024));
        assert_eq!(parse_cache_size("32768K"), Some(32 << 20));
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("?"), None);
    }

    #[test]
    fn proc_fields() {
        let t = "processor\t: 0\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2596.150\n";
        assert_eq!(proc_field(t, "model name").as_deref(), Some("AMD EPYC"));
        assert_eq!(proc_field(t, "cpu MHz").as_deref(), Some("2596.150"));
        assert_eq!(proc_field(t, "missing"), None);
    }
}
