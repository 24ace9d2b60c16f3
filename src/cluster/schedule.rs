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
    (0..rounds(n)).map(|r| round(n, r)).collect()
}

/// How many rounds [`round_robin`] has: N − 1 for even N, N for odd N (none below 2).
pub fn rounds(n: u32) -> u32 {
    if n < 2 { 0 } else { n - 1 + n % 2 }
}

/// Round `r` of [`round_robin`], made alone: rank 0 stays, the others rotate `r` places.
pub fn round(n: u32, r: u32) -> Vec<(u32, u32)> {
    // With an odd count a phantom rank `n` joins; whoever meets it sits the round out.
    let m = u64::from(n + n % 2);
    let at = |i: u64| -> u64 {
        if i == 0 {
            0
        } else {
            // The ranks 1..m after r rotations to the right.
            (i - 1 + (m - 1) - u64::from(r) % (m - 1)) % (m - 1) + 1
        }
    };
    let mut round: Vec<(u32, u32)> = (0..m / 2)
        .map(|i| (at(i), at(m - 1 - i)))
        .filter(|&(a, b)| a < u64::from(n) && b < u64::from(n))
        .map(|(a, b)| (a.min(b) as u32, a.max(b) as u32))
        .collect();
    round.sort_unstable();
    round
}

/// All ordered pairs in steps: each round of [`round_robin`] forward, then backward.
pub fn all_pairs(n: u32) -> Vec<Vec<Link>> {
    pairs(n, u32::MAX)
}

/// The rounds of [`round_robin`] among `n` ranks that at most `most` rounds keep: all where
/// they fit, else `most` of them spread evenly over the whole (round ⌊i · rounds / most⌋ for i
/// in 0..most), so that each rank meets `most` others (with an odd `n`, one round in n it sits
/// out) spread over the circle rather than its nearest.
/// Only the rounds kept are made (4,096 ranks have 4,095 rounds of 2,048 pairs).
pub fn sampled_rounds(n: u32, most: u32) -> Vec<Vec<(u32, u32)>> {
    let total = u64::from(rounds(n));
    if total <= u64::from(most) {
        return round_robin(n);
    }
    (0..u64::from(most))
        .map(|i| round(n, (i * total / u64::from(most)) as u32))
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
        // Each round made alone is the circle's, rotated round by round.
        for n in 2..=40u32 {
            let m = n + n % 2;
            let mut circle: Vec<u32> = (0..m).collect();
            for (r, made) in round_robin(n).iter().enumerate() {
                let mut expected: Vec<(u32, u32)> = (0..(m / 2) as usize)
                    .map(|i| (circle[i], circle[m as usize - 1 - i]))
                    .filter(|&(a, b)| a < n && b < n)
                    .map(|(a, b)| (a.min(b), a.max(b)))
                    .collect();
                expected.sort_unstable();
                assert_eq!(made, &expected, "n={n} round {r}");
                circle[1..].rotate_right(1);
            }
        }
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
        // The largest world: only the rounds kept are made.
        let big = sampled_rounds(4096, 63);
        assert_eq!(big.len(), 63);
        assert!(big.iter().all(|r| r.len() == 2048));
        assert_eq!(big[62], round(4096, 62 * 4095 / 63));
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
