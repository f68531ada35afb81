//! scipy's `linear_sum_assignment` (scipy 1.x `rectangular_lsap.cpp`: Crouse's shortest augmenting path), ported
//! step for step because ties are real here (speakers that never spoke have identical similarity columns) and
//! scipy's scan order and tie rule decide which of them a tag gets.

/// A minimum-cost matching of `rows × cols` costs (row-major, finite): `(row, col)` pairs, as many as the smaller
/// side, sorted by row. `None` when a cost is NaN or −∞ (scipy raises).
pub fn linear_sum_assignment(cost: &[f64], rows: usize, cols: usize) -> Option<Vec<(usize, usize)>> {
    if rows == 0 || cols == 0 {
        return Some(Vec::new());
    }
    if cost.iter().any(|c| c.is_nan() || *c == f64::NEG_INFINITY) {
        return None;
    }
    // scipy transposes a tall matrix and sorts the pairs back by row afterwards.
    let transpose = cols < rows;
    let (nr, nc) = if transpose { (cols, rows) } else { (rows, cols) };
    let c = |i: usize, j: usize| if transpose { cost[j * cols + i] } else { cost[i * cols + j] };
    let (mut u, mut v) = (vec![0.0f64; nr], vec![0.0f64; nc]);
    let mut shortest = vec![f64::INFINITY; nc];
    let mut path = vec![usize::MAX; nc];
    let mut col4row = vec![usize::MAX; nr];
    let mut row4col = vec![usize::MAX; nc];
    let (mut in_rows, mut in_cols) = (vec![false; nr], vec![false; nc]);
    let mut remaining = vec![0usize; nc];
    for current in 0..nr {
        let mut min_value = 0.0f64;
        // Filled in reverse column order, as scipy does: with ties this decides the column.
        for (it, r) in remaining.iter_mut().enumerate() {
            *r = nc - it - 1;
        }
        let mut left = nc;
        in_rows.fill(false);
        in_cols.fill(false);
        shortest.fill(f64::INFINITY);
        let mut i = current;
        let sink = loop {
            let mut index = usize::MAX;
            let mut lowest = f64::INFINITY;
            in_rows[i] = true;
            for (it, &j) in remaining[..left].iter().enumerate() {
                let reduced = min_value + c(i, j) - u[i] - v[j];
                if reduced < shortest[j] {
                    path[j] = i;
                    shortest[j] = reduced;
                }
                if shortest[j] < lowest || (shortest[j] == lowest && row4col[j] == usize::MAX) {
                    lowest = shortest[j];
                    index = it;
                }
            }
            min_value = lowest;
            if min_value == f64::INFINITY {
                return None;
            }
            let j = remaining[index];
            in_cols[j] = true;
            left -= 1;
            remaining[index] = remaining[left];
            if row4col[j] == usize::MAX {
                break j;
            }
            i = row4col[j];
        };
        u[current] += min_value;
        for r in 0..nr {
            if in_rows[r] && r != current {
                u[r] += min_value - shortest[col4row[r]];
            }
        }
        for j in 0..nc {
            if in_cols[j] {
                v[j] -= min_value - shortest[j];
            }
        }
        let mut j = sink;
        loop {
            let r = path[j];
            row4col[j] = r;
            std::mem::swap(&mut col4row[r], &mut j);
            if r == current {
                break;
            }
        }
    }
    let mut pairs: Vec<(usize, usize)> =
        if transpose { (0..nr).map(|r| (col4row[r], r)).collect() } else { (0..nr).map(|r| (r, col4row[r])).collect() };
    pairs.sort_unstable();
    Some(pairs)
}
