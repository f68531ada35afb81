//! The optimal speaker mapping: a maximum-weight assignment of rows to columns (the Hungarian problem), solved
//! with the shortest-augmenting-path method (Crouse, "On implementing 2D rectangular assignment algorithms",
//! IEEE TAES 52(4), 2016) that scipy's `linear_sum_assignment` uses, scanning rows and columns in the same order,
//! so that among equally good mappings the one scipy (and so pyannote.metrics) picks is the one found here.

/// Pairs `(row, column)` of a maximum total weight assignment of `weights [rows, columns]` (row-major), one pair
/// per row or per column, whichever are fewer; ordered by row. Weights must be finite.
pub(crate) fn max_weight_assignment(weights: &[f64], rows: usize, columns: usize) -> Vec<(usize, usize)> {
    if rows == 0 || columns == 0 {
        return Vec::new();
    }
    // Minimise the negated weights, with the shorter side as rows (scipy transposes a tall matrix).
    let transpose = columns < rows;
    let (n, m) = if transpose { (columns, rows) } else { (rows, columns) };
    let cost = |i: usize, j: usize| -> f64 {
        let (r, c) = if transpose { (j, i) } else { (i, j) };
        -weights[r * columns + c]
    };
    let column_of_row = solve(n, m, cost);
    let mut pairs: Vec<(usize, usize)> =
        column_of_row.iter().enumerate().map(|(i, &j)| if transpose { (j, i) } else { (i, j) }).collect();
    pairs.sort_unstable();
    pairs
}

/// Assigns every row of an `n × m` cost matrix (`n ≤ m`) to a distinct column at minimum total cost; returns the
/// column of each row.
fn solve(n: usize, m: usize, cost: impl Fn(usize, usize) -> f64) -> Vec<usize> {
    let mut row_potential = vec![0.0; n];
    let mut column_potential = vec![0.0; m];
    let mut column_of_row: Vec<Option<usize>> = vec![None; n];
    let mut row_of_column: Vec<Option<usize>> = vec![None; m];
    let mut path = vec![0usize; m];
    let mut shortest = vec![f64::INFINITY; m];
    for current in 0..n {
        // Dijkstra-like search from `current` for the cheapest path to a free column, over reduced costs.
        let mut row_seen = vec![false; n];
        let mut column_seen = vec![false; m];
        shortest.fill(f64::INFINITY);
        // Columns left to reach, scanned from the last (scipy's order: a constant matrix maps the identity).
        let mut remaining: Vec<usize> = (0..m).rev().collect();
        let mut reached = 0.0;
        let mut i = current;
        let sink = loop {
            row_seen[i] = true;
            let mut best: Option<(usize, f64)> = None;
            for (index, &j) in remaining.iter().enumerate() {
                let reduced = reached + cost(i, j) - row_potential[i] - column_potential[j];
                if reduced < shortest[j] {
                    path[j] = i;
                    shortest[j] = reduced;
                }
                // On equal cost, prefer a free column: it ends the search.
                let better = match best {
                    None => true,
                    Some((_, lowest)) => shortest[j] < lowest || (shortest[j] == lowest && row_of_column[j].is_none()),
                };
                if better {
                    best = Some((index, shortest[j]));
                }
            }
            let (index, lowest) = best.unwrap_or((0, f64::INFINITY));
            reached = lowest;
            let j = remaining.swap_remove(index);
            column_seen[j] = true;
            match row_of_column[j] {
                None => break j,
                Some(row) => i = row,
            }
        };
        // Update the potentials, then flip the path.
        row_potential[current] += reached;
        for r in 0..n {
            if row_seen[r] && r != current {
                if let Some(c) = column_of_row[r] {
                    row_potential[r] += reached - shortest[c];
                }
            }
        }
        for c in 0..m {
            if column_seen[c] {
                column_potential[c] -= reached - shortest[c];
            }
        }
        let mut j = sink;
        loop {
            let i = path[j];
            row_of_column[j] = Some(i);
            let previous = column_of_row[i].replace(j);
            if i == current {
                break;
            }
            // `i` had a column: it moves along the path.
            j = previous.unwrap_or(j);
        }
    }
    column_of_row.into_iter().map(|c| c.unwrap_or(0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every assignment of `min(rows, columns)` pairs, by brute force: the best total.
    fn best_total(weights: &[f64], rows: usize, columns: usize) -> f64 {
        fn go(w: &[f64], rows: usize, columns: usize, row: usize, used: &mut Vec<bool>, picked: usize) -> f64 {
            if picked == rows.min(columns) || row == rows {
                return if picked == rows.min(columns) { 0.0 } else { f64::NEG_INFINITY };
            }
            let mut best = go(w, rows, columns, row + 1, used, picked);
            for c in 0..columns {
                if !used[c] {
                    used[c] = true;
                    best = best.max(w[row * columns + c] + go(w, rows, columns, row + 1, used, picked + 1));
                    used[c] = false;
                }
            }
            best
        }
        go(weights, rows, columns, 0, &mut vec![false; columns], 0)
    }

    #[test]
    fn assignments_are_optimal_on_random_matrices() {
        let mut rng = audio_kernels::random::Rng::new(7);
        for case in 0..400 {
            let (rows, columns) = (1 + case % 5, 1 + (case / 5) % 6);
            // Small integers make ties frequent.
            let weights: Vec<f64> = (0..rows * columns).map(|_| (rng.uniform() * 4.0).floor()).collect();
            let pairs = max_weight_assignment(&weights, rows, columns);
            assert_eq!(pairs.len(), rows.min(columns));
            let mut columns_used: Vec<usize> = pairs.iter().map(|p| p.1).collect();
            columns_used.sort_unstable();
            columns_used.dedup();
            assert_eq!(columns_used.len(), pairs.len(), "{weights:?}");
            let total: f64 = pairs.iter().map(|&(r, c)| weights[r * columns + c]).sum();
            assert_eq!(total, best_total(&weights, rows, columns), "{rows}×{columns} {weights:?}");
        }
    }

    #[test]
    fn greedy_is_not_optimal_and_ties_go_as_in_scipy() {
        // Greedy would take 9 (row 0 → column 0) and then 0; the optimum is 5 + 8.
        assert_eq!(max_weight_assignment(&[9.0, 5.0, 8.0, 0.0], 2, 2), [(0, 1), (1, 0)]);
        // scipy: linear_sum_assignment(-np.ones((3, 3))) is the identity.
        assert_eq!(max_weight_assignment(&[1.0; 9], 3, 3), [(0, 0), (1, 1), (2, 2)]);
        assert_eq!(max_weight_assignment(&[1.0; 6], 3, 2), [(0, 0), (1, 1)]);
        assert!(max_weight_assignment(&[], 0, 3).is_empty());
    }
}
