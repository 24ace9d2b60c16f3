//! How records are grouped for the tables and notes: by subsystem and unit, by any key, the
//! distinct values of a column.

use crate::results::ResultRecord;
use crate::results::{Subsystem, Unit};
use std::collections::{HashMap, HashSet};
use std::hash::Hash;

/// True when some record of the group has a reference figure.
/// The reference tools of `records` in the order they first appear, joined ("fio",
/// "likwid-bench, STREAM"), or None where no record has a reference figure.
pub fn reference_tools(records: &[&ResultRecord]) -> Option<String> {
    let tools = distinct(
        records
            .iter()
            .filter_map(|r| Some(r.reference.as_ref()?.tool.as_str())),
    );
    (!tools.is_empty()).then(|| tools.join(", "))
}

/// `items` without repeats, each where it first comes.
pub(crate) fn distinct<T: Hash + Eq + Clone>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen: HashSet<T> = HashSet::new();
    items
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

/// Records grouped by (subsystem, unit), in first-seen order: one table each.
pub fn groups(results: &[ResultRecord]) -> Vec<((Subsystem, Unit), Vec<&ResultRecord>)> {
    grouped(results, |r| (r.subsystem, r.unit))
}

/// Records grouped by `key`, in first-seen order.
pub(crate) fn group_by<'a, K: Hash + Eq + Clone>(
    records: &[&'a ResultRecord],
    key: impl Fn(&ResultRecord) -> K,
) -> Vec<(K, Vec<&'a ResultRecord>)> {
    grouped(records.iter().copied(), |r| key(r))
}

/// `items` grouped by `key`: the groups in the order their first items come, each in the
/// items' order. The groups are found through a hash index, so that a run of many points (and
/// many groups) is grouped in one pass.
pub(crate) fn grouped<T, K: Hash + Eq + Clone>(
    items: impl IntoIterator<Item = T>,
    key: impl Fn(&T) -> K,
) -> Vec<(K, Vec<T>)> {
    let mut index: HashMap<K, usize> = HashMap::new();
    let mut out: Vec<(K, Vec<T>)> = Vec::new();
    for item in items {
        let k = key(&item);
        match index.get(&k) {
            Some(&i) => out[i].1.push(item),
            None => {
                index.insert(k.clone(), out.len());
                out.push((k, vec![item]));
            }
        }
    }
    out
}
