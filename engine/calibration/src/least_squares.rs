//! The linear algebra of the fit ([`super::fit`]): which columns of a
//! Jacobian are independent, the normal equations of a least-squares
//! step, and their damped solution. Small dense systems (at most eight
//! unknowns), so plain Gaussian elimination serves.

/// A parameter's column must move the predictions by at least this much
/// (root mean square of d ln(model) / d ln(parameter)) to be fitted...
const NEGLIGIBLE: f64 = 1e-4;
/// ...and at least this fraction of it must be independent of the columns
/// kept before it.
const INDEPENDENT: f64 = 0.02;

/// The parameters the data can tell apart: in the columns' order, each whose
/// column is not negligible and not (within [`INDEPENDENT`]) a combination
/// of those kept before it (Gram-Schmidt), at most one per measurement.
pub(super) fn identifiable(columns: &[Vec<f64>], points: usize) -> Vec<usize> {
    let mut basis: Vec<Vec<f64>> = Vec::new();
    let mut kept = Vec::new();
    for (k, column) in columns.iter().enumerate() {
        if kept.len() == points {
            break;
        }
        let norm = libm::sqrt(sum_of_squares(column));
        if norm < NEGLIGIBLE * libm::sqrt(column.len() as f64) {
            continue;
        }
        let mut rest = column.clone();
        for unit in &basis {
            let along: f64 = rest.iter().zip(unit).map(|(a, b)| a * b).sum();
            rest.iter_mut().zip(unit).for_each(|(a, b)| *a -= along * b);
        }
        let rest_norm = libm::sqrt(sum_of_squares(&rest));
        if rest_norm < INDEPENDENT * norm {
            continue;
        }
        basis.push(rest.iter().map(|a| a / rest_norm).collect());
        kept.push(k);
    }
    kept
}

/// `JᵀJ` and `Jᵀr` of the Jacobian given by columns.
pub(super) fn normal_equations(columns: &[Vec<f64>], r: &[f64]) -> (Vec<Vec<f64>>, Vec<f64>) {
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let normal = columns
        .iter()
        .map(|a| columns.iter().map(|b| dot(a, b)).collect())
        .collect();
    let gradient = columns.iter().map(|a| dot(a, r)).collect();
    (normal, gradient)
}

/// The step `δ` solving `(A + λ diag(A)) δ = -g` by Gaussian elimination
/// with partial pivoting; `None` if the system is singular.
pub(super) fn solve(a: &[Vec<f64>], g: &[f64], damping: f64) -> Option<Vec<f64>> {
    let n = g.len();
    let mut m: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            let mut row = a[i].clone();
            row[i] += damping * a[i][i].max(1e-12);
            row.push(-g[i]);
            row
        })
        .collect();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[pivot][col].abs() < 1e-300 {
            return None;
        }
        m.swap(col, pivot);
        let (upper, lower) = m.split_at_mut(col + 1);
        let pivot_row = &upper[col];
        for row in lower {
            let factor = row[col] / pivot_row[col];
            row.iter_mut()
                .zip(pivot_row)
                .skip(col)
                .for_each(|(a, p)| *a -= factor * p);
        }
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let tail: f64 = (i + 1..n).map(|k| m[i][k] * x[k]).sum();
        x[i] = (m[i][n] - tail) / m[i][i];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

pub(super) fn sum_of_squares(values: &[f64]) -> f64 {
    values.iter().map(|v| v * v).sum()
}

/// [`solve`] for the parameters not `held`; the held ones do not move.
pub(super) fn solve_unheld(
    normal: &[Vec<f64>],
    gradient: &[f64],
    damping: f64,
    held: &[bool],
) -> Option<Vec<f64>> {
    let moving: Vec<usize> = (0..gradient.len()).filter(|&i| !held[i]).collect();
    let reduced: Vec<Vec<f64>> = moving
        .iter()
        .map(|&i| moving.iter().map(|&j| normal[i][j]).collect())
        .collect();
    let g: Vec<f64> = moving.iter().map(|&i| gradient[i]).collect();
    let step = solve(&reduced, &g, damping)?;
    let mut full = vec![0.0; gradient.len()];
    for (&i, d) in moving.iter().zip(step) {
        full[i] = d;
    }
    Some(full)
}
