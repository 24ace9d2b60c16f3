//! The names `verify` gives what it makes, each after its process id, and the parsers that
//! recognise them for `verify --cleanup`: in one place, so that what is made and what is
//! looked for cannot drift apart. A name is verify's only where it is exactly what these
//! functions make for some pid (`pbv12s`, not `pbv12sx`, `pbv012s` or `xpbv12s`).

/// The two network namespaces of process `pid`, the server's then the client's; the veth
/// pair's ends in them have the same names.
pub fn namespaces(pid: u32) -> [String; 2] {
    [format!("pbv{pid}s"), format!("pbv{pid}c")]
}

/// The TUN devices of the delay line, in the server's namespace then the client's.
pub fn tuns(pid: u32) -> [String; 2] {
    [format!("pbv{pid}ts"), format!("pbv{pid}tc")]
}

/// The control groups (one per controller's hierarchy), made below the process's own.
pub fn group(pid: u32) -> String {
    format!("peakbench-verify-{pid}")
}

/// The temporary directory's name before its random part.
pub fn temp_prefix(pid: u32) -> String {
    format!("peakbench-verify-{pid}-")
}

/// The random part's length (letters and digits).
pub const TEMP_RANDOM: usize = 6;

/// The tmpfs's source, as /proc/self/mounts shows it.
pub const MOUNT_SOURCE: &str = "peakbench-verify";

/// The file in the tmpfs that the loop device is attached to.
pub const IMAGE: &str = "disk.img";

/// The pid at the start of `rest` (its leading digits).
fn leading_pid(rest: &str) -> Option<u32> {
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The pid whose network namespace is named `name`.
pub fn namespace_pid(name: &str) -> Option<u32> {
    let pid = leading_pid(name.strip_prefix("pbv")?)?;
    namespaces(pid).contains(&name.to_string()).then_some(pid)
}

/// The pid whose veth end or TUN device is named `name`.
pub fn link_pid(name: &str) -> Option<u32> {
    let pid = leading_pid(name.strip_prefix("pbv")?)?;
    let name = name.to_string();
    (namespaces(pid).contains(&name) || tuns(pid).contains(&name)).then_some(pid)
}

/// The pid whose control group is named `name`.
pub fn group_pid(name: &str) -> Option<u32> {
    let pid = leading_pid(name.strip_prefix("peakbench-verify-")?)?;
    (group(pid) == name).then_some(pid)
}

/// The pid whose temporary directory is named `name`.
pub fn temp_dir_pid(name: &str) -> Option<u32> {
    let pid = leading_pid(name.strip_prefix("peakbench-verify-")?)?;
    let random = name.strip_prefix(&temp_prefix(pid))?;
    (random.len() == TEMP_RANDOM && random.bytes().all(|b| b.is_ascii_alphanumeric()))
        .then_some(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_made_is_recognised_with_its_pid() {
        for pid in [1, 42, 4_194_304] {
            for n in namespaces(pid) {
                assert_eq!(namespace_pid(&n), Some(pid));
                assert_eq!(link_pid(&n), Some(pid));
            }
            for n in tuns(pid) {
                assert_eq!(link_pid(&n), Some(pid));
                assert_eq!(namespace_pid(&n), None, "{n} is no namespace's");
            }
            assert_eq!(group_pid(&group(pid)), Some(pid));
            let dir = format!("{}aB3xZ9", temp_prefix(pid));
            assert_eq!(temp_dir_pid(&dir), Some(pid));
        }
    }

    #[test]
    fn names_that_only_look_alike_are_not_verifys() {
        for n in [
            "pbv12",
            "pbv12x",
            "pbv12sx",
            "pbv12cs",
            "xpbv12s",
            "pbv012s",
            "pbvs",
            "pbv12s ",
            "PBV12s",
            "pbv+12s",
            "pbv99999999999s",
        ] {
            assert_eq!(namespace_pid(n), None, "{n}");
            assert_eq!(link_pid(n), None, "{n}");
        }
        assert_eq!(link_pid("pbv12tx"), None);
        for n in [
            "peakbench-verify-",
            "peakbench-verify-12x",
            "peakbench-verify-012",
            "peakbench-verify-12-",
            "peakbench-verify",
            "peakbench-verify-12-aB3xZ9",
        ] {
            assert_eq!(group_pid(n), None, "{n}");
        }
        for n in [
            "peakbench-verify-12",
            "peakbench-verify-12-aB3xZ",
            "peakbench-verify-12-aB3xZ9x",
            "peakbench-verify-12-aB3-Z9",
            "peakbench-verify-aB3xZ9",
            "peakbench-verify-012-aB3xZ9",
        ] {
            assert_eq!(temp_dir_pid(n), None, "{n}");
        }
    }
}
