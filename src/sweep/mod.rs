//! Parameter axes and the points they span.

/// 1, 2, 4, … up to `max`, and `max` itself when it is not a power of two.
pub fn powers_of_two_up_to(max: usize) -> Vec<usize> {
    let mut out: Vec<usize> = std::iter::successors(Some(1usize), |n| n.checked_mul(2))
        .take_while(|n| *n <= max)
        .collect();
    if max > 0 && out.last() != Some(&max) {
        out.push(max);
    }
    out
}

/// Every pair of the two axes, the first axis outermost.
pub fn product<A: Clone, B: Clone>(outer: &[A], inner: &[B]) -> Vec<(A, B)> {
    outer
        .iter()
        .flat_map(|a| inner.iter().map(move |b| (a.clone(), b.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes() {
        assert_eq!(powers_of_two_up_to(1), vec![1]);
        assert_eq!(powers_of_two_up_to(2), vec![1, 2]);
        assert_eq!(powers_of_two_up_to(12), vec![1, 2, 4, 8, 12]);
        assert_eq!(
            product(&[1, 2], &['a', 'b']),
            vec![(1, 'a'), (1, 'b'), (2, 'a'), (2, 'b')]
        );
    }
}
