//! Shape arithmetic that inference and the executor share: what a Slice keeps of an axis.
//! Written once, so that the two cannot disagree.

/// The indices a slice `start:end:step` keeps of an axis of `size` elements, clamped as numpy
/// and ONNX clamp them: the first index and how many there are. `None` for a step of 0 or a
/// negative size. An empty result has first index 0.
pub fn slice_range(size: i64, start: i64, end: i64, step: i64) -> Option<(i64, i64)> {
    if step == 0 || size < 0 {
        return None;
    }
    let fix = |v: i64| if v < 0 { v.saturating_add(size) } else { v };
    let (first, end) = if step > 0 {
        (fix(start).clamp(0, size), fix(end).clamp(0, size))
    } else if size > 0 {
        (fix(start).clamp(0, size - 1), fix(end).clamp(-1, size - 1))
    } else {
        return Some((0, 0));
    };
    // The indices first, first+step, ... strictly before `end`: the span over the step,
    // rounded up, computed so that no step (i64::MIN included) overflows.
    let span = if step > 0 { end - first } else { first - end };
    if span <= 0 {
        return Some((0, 0));
    }
    let count = (span.unsigned_abs() - 1) / step.unsigned_abs() + 1;
    Some((first, count as i64))
}

#[cfg(test)]
mod tests {
    use super::slice_range;

    /// The indices the ONNX Slice spec's words give, enumerated: a negative bound counts from
    /// the end; starts are clamped to [0, size] for positive steps and [0, size-1] for
    /// negative ones, ends to [0, size] and [-1, size-1].
    fn spec(size: i64, start: i64, end: i64, step: i64) -> Vec<i64> {
        let norm = |v: i64, lo: i64, hi: i64| (if v < 0 { v + size } else { v }).max(lo).min(hi);
        let (s, e) = if step > 0 {
            (norm(start, 0, size), norm(end, 0, size))
        } else {
            (norm(start, 0, size - 1), norm(end, -1, size - 1))
        };
        let mut out = Vec::new();
        let mut i = s;
        while (step > 0 && i < e) || (step < 0 && i > e) {
            out.push(i);
            i += step;
        }
        out
    }

    #[test]
    fn matches_the_spec_on_small_axes_empty_ones_included() {
        for size in 0..6 {
            for start in -8..8 {
                for end in -8..8 {
                    for step in [-3, -2, -1, 1, 2, 3] {
                        let want = spec(size, start, end, step);
                        let (first, count) = slice_range(size, start, end, step).unwrap();
                        let got: Vec<i64> = (0..count).map(|k| first + k * step).collect();
                        assert_eq!(got, want, "size {size}, {start}:{end}:{step}");
                    }
                }
            }
        }
    }

    #[test]
    fn extreme_bounds_and_steps_do_not_overflow() {
        assert_eq!(slice_range(5, 0, i64::MAX, i64::MAX), Some((0, 1)));
        assert_eq!(slice_range(5, i64::MAX, i64::MIN, i64::MIN), Some((4, 1)));
        assert_eq!(slice_range(0, -1, i64::MIN, -1), Some((0, 0)));
        assert_eq!(slice_range(i64::MAX, 0, i64::MAX, 1), Some((0, i64::MAX)));
        assert_eq!(slice_range(3, 0, 3, 0), None);
    }
}
