//! Who does what when: the steps of a multi-node run. Each step is a set of tasks that run at
//! once; the coordinator waits for all of a step's tasks (a barrier) before the next step.
//!
//! * Node-local benchmarks: ranks that share a machine (the same /etc/machine-id) take turns;
//!   ranks on different machines run together.
//! * All pairs: the circle method of round-robin tournaments — N−1 rounds for even N, N for odd
//!   N (one rank sits out each round) — each round a set of disjoint pairs; each round runs
//!   twice, once in each direction, so every ordered pair is measured with nothing else
//!   sharing either node's link.
//! * Ring: every rank sends to the next one at once. Bisection: the first half sends to the
//!   second half at once, then the other way.

/// One network test: `src` is the client (it sends, and it pings), `dst` runs the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    pub src: u32,
    pub dst: u32,
}

/// Ranks grouped into turns: in turn `t`, the `t`-th rank of every machine. `machines[r]` is
/// rank r's machine id.
pub fn turns(machines: &[String]) -> Vec<Vec<u32>> {
    let mut groups: Vec<(&str, Vec<u32>)> = Vec::new();
    for (rank, m) in machines.iter().enumerate() {
        match groups.iter_mut().find(|(id, _)| *id == m.as_str()) {
            Some((_, g)) => g.push(rank as u32),
            None => groups.push((m, vec![rank as u32])),
        }
    }
    let depth = groups.iter().map(|(_, g)| g.len()).max().unwrap_or(0);
    (0..depth)
        .map(|t| {
            groups
                .iter()
                .filter_map(|(_, g)| g.get(t).copied())
                .collect()
        })
        .collect()
}

/// The rounds of all pairs among `n` ranks, each a set of disjoint unordered pairs (a < b).
pub fn round_robin(n: u32) -> Vec<Vec<(u32, u32)>> {
    if n < 2 {
        return Vec::new();
    }
    // With an odd count a phantom rank `n` joins; whoever meets it sits the round out.
    let m = n + n % 2;
    let mut circle: Vec<u32> = (0..m).collect();
    let mut rounds = Vec::new();
    for _ in 0..m - 1 {
        let mut round = Vec::new();
        for i in 0..(m / 2) as usize {
            let (a, b) = (circle[i], circle[m as usize - 1 - i]);
            if a < n && b < n {
                round.push((a.min(b), a.max(b)));
            }
        }
        round.sort_unstable();
        rounds.push(round);
        // Rank 0 stays; the others rotate one place.
        circle[1..].rotate_right(1);
    }
    rounds
}

/// All ordered pairs in steps: each round of [`round_robin`] forward, then backward.
pub fn all_pairs(n: u32) -> Vec<Vec<Link>> {
    pairs(n, u32::MAX)
}

/// The rounds of [`round_robin`] among `n` ranks that at most `most` rounds keep: all where
/// they fit, else `most` of them spread evenly over the whole (round ⌊i · rounds / most⌋ for i
/// in 0..most), so that each rank meets `most` others (with an odd `n`, one round in n it sits
/// out) spread over the circle rather than its nearest.
pub fn sampled_rounds(n: u32, most: u32) -> Vec<Vec<(u32, u32)>> {
    let rounds = round_robin(n);
    let total = rounds.len() as u64;
    if total <= u64::from(most) {
        return rounds;
    }
    let keep: Vec<usize> = (0..u64::from(most))
        .map(|i| (i * total / u64::from(most)) as usize)
        .collect();
    rounds
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep.binary_search(i).is_ok())
        .map(|(_, r)| r)
        .collect()
}

/// The ordered pairs of [`sampled_rounds`] in steps: each round forward, then backward.
pub fn pairs(n: u32, most_rounds: u32) -> Vec<Vec<Link>> {
    let mut steps = Vec::new();
    for round in sampled_rounds(n, most_rounds) {
        steps.push(
            round
                .iter()
                .map(|&(a, b)| Link { src: a, dst: b })
                .collect(),
        );
        steps.push(
            round
                .iter()
                .map(|&(a, b)| Link { src: b, dst: a })
                .collect(),
        );
    }
    steps
}

/// Every rank measures itself (through its own address); ranks sharing a machine take turns.
pub fn selves(machines: &[String]) -> Vec<Vec<Link>> {
    turns(machines)
        .into_iter()
        .map(|t| t.into_iter().map(|r| Link { src: r, dst: r }).collect())
        .collect()
}

/// One step: rank i sends to rank i+1 (mod n), all at once. Needs 3 ranks or more (with two,
/// it is one pair both ways, which all pairs already measures).
pub fn ring(n: u32) -> Vec<Vec<Link>> {
    if n < 3 {
        return Vec::new();
    }
    vec![
        (0..n)
            .map(|i| Link {
                src: i,
                dst: (i + 1) % n,
            })
            .collect(),
    ]
}

/// Two steps: ranks 0..h send to h..2h (i to i+h) all at once, then back; with an odd count
/// the last rank sits out.
pub fn bisection(n: u32) -> Vec<Vec<Link>> {
    let h = n / 2;
    if h == 0 {
        return Vec::new();
    }
    let forward: Vec<Link> = (0..h).map(|i| Link { src: i, dst: i + h }).collect();
    let back = forward
        .iter()
        .map(|l| Link {
            src: l.dst,
            dst: l.src,
        })
        .collect();
    vec![forward, back]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn ranks_on_one_machine_take_turns() {
        let m = |s: &str| s.to_string();
        let machines = [m("a"), m("a"), m("b"), m("a"), m("c")];
        assert_eq!(turns(&machines), vec![vec![0, 2, 4], vec![1], vec![3]]);
        assert_eq!(turns(&[m("x"), m("y")]), vec![vec![0, 1]]);
        assert!(turns(&[]).is_empty());
    }

    #[test]
    fn round_robin_meets_every_pair_once_in_disjoint_rounds() {
        for n in 2..=9u32 {
            let rounds = round_robin(n);
            assert_eq!(
                rounds.len() as u32,
                if n % 2 == 0 { n - 1 } else { n },
                "n={n}"
            );
            let mut seen = BTreeSet::new();
            for round in &rounds {
                let mut busy = BTreeSet::new();
                for &(a, b) in round {
                    assert!(a < b && b < n);
                    assert!(
                        busy.insert(a) && busy.insert(b),
                        "n={n}: {round:?} not disjoint"
                    );
                    assert!(seen.insert((a, b)), "n={n}: ({a},{b}) twice");
                }
            }
            assert_eq!(seen.len() as u32, n * (n - 1) / 2, "n={n}");
        }
        assert!(round_robin(1).is_empty() && round_robin(0).is_empty());
    }

    #[test]
    fn all_pairs_measures_every_ordered_pair() {
        let steps = all_pairs(3);
        let links: BTreeSet<(u32, u32)> = steps.iter().flatten().map(|l| (l.src, l.dst)).collect();
        assert_eq!(links.len(), 6);
        assert_eq!(steps.len(), 6);
        assert!(steps.iter().all(|s| s.len() == 1));
        assert_eq!(all_pairs(4).len(), 6);
        assert!(all_pairs(4).iter().all(|s| s.len() == 2));
    }

    /// Beyond `most` rounds, that many spread over the whole: disjoint, each rank in every
    /// round (even n), no pair twice, both directions.
    #[test]
    fn a_large_fleet_samples_rounds_spread_over_the_circle() {
        let rounds = sampled_rounds(256, 8);
        assert_eq!(rounds.len(), 8);
        let all = round_robin(256);
        let expected: Vec<_> = (0..8).map(|i| all[i * 255 / 8].clone()).collect();
        assert_eq!(rounds, expected);
        let mut seen = BTreeSet::new();
        for round in &rounds {
            assert_eq!(round.len(), 128);
            assert!(round.iter().all(|&p| seen.insert(p)));
        }
        let steps = pairs(256, 8);
        assert_eq!(steps.len(), 16);
        let ordered: BTreeSet<(u32, u32)> =
            steps.iter().flatten().map(|l| (l.src, l.dst)).collect();
        assert_eq!(ordered.len(), 8 * 256);
        // Within the bound, every round.
        assert_eq!(sampled_rounds(9, 9), round_robin(9));
        assert_eq!(pairs(4, 3), all_pairs(4));
        assert!(sampled_rounds(256, 0).is_empty());
    }

    #[test]
    fn ring_and_bisection() {
        let r = ring(3);
        assert_eq!(r.len(), 1);
        let l: Vec<(u32, u32)> = r[0].iter().map(|l| (l.src, l.dst)).collect();
        assert_eq!(l, vec![(0, 1), (1, 2), (2, 0)]);
        assert!(ring(2).is_empty());
        let b = bisection(5);
        let f: Vec<(u32, u32)> = b[0].iter().map(|l| (l.src, l.dst)).collect();
        assert_eq!(f, vec![(0, 2), (1, 3)]);
        assert_eq!(b[1][0], Link { src: 2, dst: 0 });
        assert!(bisection(1).is_empty());
    }

    #[test]
    fn selves_follow_the_machines() {
        let machines = ["a".to_string(), "a".to_string(), "b".to_string()];
        let s = selves(&machines);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0], vec![Link { src: 0, dst: 0 }, Link { src: 2, dst: 2 }]);
    }
}
