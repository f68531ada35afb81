//! Which `k` indices torch's CPU `topk(k, largest=True)` picks, ties included.
//!
//! The speaker cache ranks frame scores with `torch.topk`, and its ties are structural: a compressed cache
//! holds a frame twice when two speakers kept it, so the next compression sees exactly equal scores and
//! must choose between the copies. torch does not break ties by index; it builds `(value, index)` pairs and
//! lets libstdc++'s `std::nth_element` (when `64·k > n`) or `std::partial_sort` (`64·k ≤ n`) move them, and
//! the first `k` slots are the answer (`aten/src/ATen/native/TopKImpl.h`). A different choice changes the
//! cache, and with it every later logit (4–6e-3 relative in the `diar-tiny` streaming sessions). This is a
//! step-by-step port of those two algorithms (GCC's `bits/stl_algo.h`, `bits/stl_heap.h`); the upstream
//! references were computed on the CPU (CUDA's `topk` would choose differently).

/// One candidate: its value and its index in the input.
type Entry = (f64, usize);

/// torch's comparator for `largest=True`: `a` goes before `b` (NaN first, as torch orders it).
fn before(a: Entry, b: Entry) -> bool {
    (a.0.is_nan() && !b.0.is_nan()) || a.0 > b.0
}

/// The indices of the `k` largest `values` (at most `values.len()`) that torch's CPU `topk` returns, in
/// its order (the set is what the speaker cache uses).
pub fn top_k(values: &[f64], k: usize) -> Vec<usize> {
    let n = values.len();
    let k = k.min(n);
    if k == 0 {
        return Vec::new();
    }
    let mut q: Vec<Entry> = values.iter().copied().zip(0..).collect();
    if k * 64 <= n {
        // `std::partial_sort`: the heap selection decides the set; its final sort only reorders it.
        heap_select(&mut q, 0, k, n);
        sort_heap(&mut q, k);
    } else {
        // `std::nth_element(begin, begin + k − 1, end)`.
        introselect(&mut q, 0, k - 1, n, 2 * floor_log2(n));
    }
    q[..k].iter().map(|&(_, index)| index).collect()
}

fn floor_log2(n: usize) -> usize {
    (usize::BITS - 1 - n.leading_zeros()) as usize
}

/// `std::__introselect`: quickselect with median-of-three pivots, falling back to a heap selection when the
/// recursion gets too deep, and to insertion sort on the last few elements.
fn introselect(q: &mut [Entry], mut first: usize, nth: usize, mut last: usize, mut depth: usize) {
    while last - first > 3 {
        if depth == 0 {
            heap_select(q, first, nth + 1, last);
            q.swap(first, nth);
            return;
        }
        depth -= 1;
        let mid = first + (last - first) / 2;
        move_median_to_first(q, first, first + 1, mid, last - 1);
        let cut = unguarded_partition(q, first + 1, last, first);
        if cut <= nth {
            first = cut;
        } else {
            last = cut;
        }
    }
    insertion_sort(q, first, last);
}

/// `std::__move_median_to_first`: swaps `q[result]` with the median of `q[a]`, `q[b]`, `q[c]`, in
/// libstdc++'s branch order (which decides which of equal values moves).
fn move_median_to_first(q: &mut [Entry], result: usize, a: usize, b: usize, c: usize) {
    let median = if before(q[a], q[b]) {
        if before(q[b], q[c]) {
            b
        } else if before(q[a], q[c]) {
            c
        } else {
            a
        }
    } else if before(q[a], q[c]) {
        a
    } else if before(q[b], q[c]) {
        c
    } else {
        b
    };
    q.swap(result, median);
}

/// `std::__unguarded_partition` around the pivot at `pivot` (outside `[first, last)`).
fn unguarded_partition(q: &mut [Entry], mut first: usize, mut last: usize, pivot: usize) -> usize {
    loop {
        while before(q[first], q[pivot]) {
            first += 1;
        }
        last -= 1;
        while before(q[pivot], q[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        q.swap(first, last);
        first += 1;
    }
}

/// `std::__insertion_sort` of `q[first..last]`.
fn insertion_sort(q: &mut [Entry], first: usize, last: usize) {
    for i in first + 1..last.max(first + 1) {
        let value = q[i];
        if before(value, q[first]) {
            q.copy_within(first..i, first + 1);
            q[first] = value;
        } else {
            let mut j = i;
            while before(value, q[j - 1]) {
                q[j] = q[j - 1];
                j -= 1;
            }
            q[j] = value;
        }
    }
}

/// `std::__heap_select`: a heap of the first `middle − first` entries, replacing its top by every later
/// entry that goes before it.
fn heap_select(q: &mut [Entry], first: usize, middle: usize, last: usize) {
    make_heap(q, first, middle);
    for i in middle..last {
        if before(q[i], q[first]) {
            pop_heap(q, first, middle, i);
        }
    }
}

/// `std::__sort_heap` of `q[..end]` (the order `std::partial_sort` leaves).
fn sort_heap(q: &mut [Entry], mut end: usize) {
    while end > 1 {
        end -= 1;
        pop_heap(q, 0, end, end);
    }
}

fn make_heap(q: &mut [Entry], first: usize, last: usize) {
    let len = last - first;
    if len < 2 {
        return;
    }
    for parent in (0..=(len - 2) / 2).rev() {
        let value = q[first + parent];
        adjust_heap(q, first, parent, len, value);
    }
}

/// `std::__pop_heap`: moves the top to `result` and re-heaps with the value that was there.
fn pop_heap(q: &mut [Entry], first: usize, last: usize, result: usize) {
    let value = q[result];
    q[result] = q[first];
    adjust_heap(q, first, 0, last - first, value);
}

fn adjust_heap(q: &mut [Entry], first: usize, mut hole: usize, len: usize, value: Entry) {
    let top = hole;
    let mut child = hole;
    while child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if before(q[first + child], q[first + child - 1]) {
            child -= 1;
        }
        q[first + hole] = q[first + child];
        hole = child;
    }
    if len.is_multiple_of(2) && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        q[first + hole] = q[first + child - 1];
        hole = child - 1;
    }
    push_heap(q, first, hole, top, value);
}

fn push_heap(q: &mut [Entry], first: usize, mut hole: usize, top: usize, value: Entry) {
    while hole > top {
        let parent = (hole - 1) / 2;
        if !before(q[first + parent], value) {
            break;
        }
        q[first + hole] = q[first + parent];
        hole = parent;
    }
    q[first + hole] = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `testdata/torch-top-k.json`: torch's index lists on tie-heavy vectors (`scripts/torch_top_k/`).
    fn cases() -> Vec<(Vec<f64>, usize, Vec<usize>)> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/torch-top-k.json");
        let text = std::fs::read_to_string(path).expect("testdata/torch-top-k.json");
        let json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let value = |v: &serde_json::Value| match v.as_str() {
            Some("inf") => f64::INFINITY,
            Some("-inf") => f64::NEG_INFINITY,
            _ => v.as_f64().expect("a number"),
        };
        let index = |v: &serde_json::Value| v.as_u64().expect("an index") as usize;
        json["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .map(|c| {
                let values = c["values"].as_array().expect("values").iter().map(value).collect();
                let k = index(&c["k"]);
                (values, k, c["indices"].as_array().expect("indices").iter().map(index).collect())
            })
            .collect()
    }

    #[test]
    fn picks_what_torch_picks_on_ties_in_its_order() {
        let cases = cases();
        let partial_sorts = cases.iter().filter(|(v, k, _)| k * 64 <= v.len()).count();
        assert!(partial_sorts >= 20 && partial_sorts + 20 <= cases.len(), "both branches: {partial_sorts}");
        for (i, (values, k, expected)) in cases.iter().enumerate() {
            assert_eq!(&top_k(values, *k), expected, "case {i}: k = {k} of {} values", values.len());
        }
    }

    #[test]
    fn ties_are_not_broken_toward_the_lower_index() {
        // Why the port exists: among equal values torch's selection keeps later indices.
        let differs = cases().iter().any(|(values, k, expected)| {
            let mut lowest: Vec<usize> = (0..values.len()).collect();
            lowest.sort_by(|&a, &b| values[b].total_cmp(&values[a]).then(a.cmp(&b)));
            let mut torch = expected.clone();
            torch.sort_unstable();
            let mut lowest = lowest[..*k].to_vec();
            lowest.sort_unstable();
            torch != lowest
        });
        assert!(differs);
    }

    #[test]
    fn the_picks_are_a_top_k_set() {
        let mut state = 0x5eedu64;
        for n in 1..200 {
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    [f64::NEG_INFINITY, 0.0, 1.0, 2.5, f64::INFINITY][(state >> 61) as usize % 5]
                })
                .collect();
            for k in [1, n / 3, n / 64, n] {
                let picked = top_k(&values, k);
                let mut unique = picked.clone();
                unique.sort_unstable();
                unique.dedup();
                assert_eq!(unique.len(), k.min(n), "n = {n}, k = {k}: distinct indices");
                let smallest_picked = picked.iter().map(|&i| values[i]).fold(f64::INFINITY, f64::min);
                let largest_left =
                    (0..n).filter(|i| !picked.contains(i)).map(|i| values[i]).fold(f64::NEG_INFINITY, f64::max);
                assert!(largest_left <= smallest_picked, "n = {n}, k = {k}");
            }
        }
    }
}
