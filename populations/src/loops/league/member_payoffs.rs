//! The league's payoff table among its members ([`MemberPayoffs`]): one flat square of
//! numbers, not a vector per row, because a long league's table has thousands of rows and
//! every evaluation point grows it, copies it (the round's backup shares it) and reads it
//! whole.

use serde::Deserialize;

/// Member `i`'s mean payoff against member `j` (both seats averaged), `None` where not
/// evaluated; square, indexed by the members' positions, a pair's two entries both there
/// or both missing. Row-major, `NaN` standing for `None` (an evaluated payoff is finite).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(from = "Vec<Vec<Option<f64>>>")]
pub(super) struct MemberPayoffs {
    n: usize,
    cells: Vec<f64>,
}

impl MemberPayoffs {
    /// Members covered.
    pub(super) fn len(&self) -> usize {
        self.n
    }

    pub(super) fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Entry `(i, j)`; `None` outside the table.
    pub(super) fn get(&self, i: usize, j: usize) -> Option<f64> {
        if i < self.n && j < self.n { Some(self.cells[i * self.n + j]).filter(|x| !x.is_nan()) } else { None }
    }

    /// Set entries `(i, j)` and `(j, i)` (inside the table): both, or with either `None`,
    /// neither.
    pub(super) fn set_pair(&mut self, i: usize, j: usize, i_vs_j: Option<f64>, j_vs_i: Option<f64>) {
        let (a, b) = match (i_vs_j, j_vs_i) {
            (Some(a), Some(b)) => (a, b),
            _ => (f64::NAN, f64::NAN),
        };
        self.cells[i * self.n + j] = a;
        self.cells[j * self.n + i] = b;
    }

    /// Row `i`, one entry per member.
    pub(super) fn row(&self, i: usize) -> Vec<Option<f64>> {
        (0..self.n).map(|j| self.get(i, j)).collect()
    }

    /// Column `j`, one entry per member.
    pub(super) fn column(&self, j: usize) -> Vec<Option<f64>> {
        (0..self.n).map(|i| self.get(i, j)).collect()
    }

    /// This table over `n` members: the first `min(n, len)` members' entries kept, the rest
    /// `None`. One pass, so growing a shared table copies it once.
    pub(super) fn resized(&self, n: usize) -> Self {
        self.resized_into(n, Vec::new())
    }

    /// [`resized`](MemberPayoffs::resized) into `buffer`'s memory.
    pub(super) fn resized_into(&self, n: usize, mut cells: Vec<f64>) -> Self {
        let kept = n.min(self.n);
        cells.clear();
        cells.reserve(n * n);
        for old in self.cells.chunks_exact(self.n.max(1)).take(kept) {
            cells.extend_from_slice(&old[..kept]);
            cells.resize(cells.len() + n - kept, f64::NAN);
        }
        cells.resize(n * n, f64::NAN);
        MemberPayoffs { n, cells }
    }

    /// Clear row `m` and column `m`.
    pub(super) fn clear_member(&mut self, m: usize) {
        let n = self.n;
        self.cells[m * n..(m + 1) * n].fill(f64::NAN);
        self.cells.iter_mut().skip(m).step_by(n).for_each(|x| *x = f64::NAN);
    }

    /// Remove member `position`'s row and column; the members after it move down one.
    pub(super) fn remove(&mut self, position: usize) {
        let n = self.n;
        let mut cells = Vec::with_capacity((n - 1) * (n - 1));
        for (_, row) in self.cells.chunks_exact(n).enumerate().filter(|&(i, _)| i != position) {
            cells.extend_from_slice(&row[..position]);
            cells.extend_from_slice(&row[position + 1..]);
        }
        *self = MemberPayoffs { n: n - 1, cells };
    }

    /// Every entry through `f`, row-major (the diagonal too), into `out`.
    pub(super) fn map_into(&self, out: &mut Vec<f64>, f: impl Fn(Option<f64>) -> f64) {
        out.clear();
        out.extend(self.cells.iter().map(|&x| f(Some(x).filter(|x| !x.is_nan()))));
    }

    /// The cells' memory, for reuse.
    pub(super) fn into_cells(self) -> Vec<f64> {
        self.cells
    }

    /// The pairs `i < j` with either entry missing, in row-major order.
    pub(super) fn missing_pairs(&self) -> Vec<(usize, usize)> {
        // A pair's entries are both there or both missing: the upper triangle tells.
        let n = self.n;
        let upper = self
            .cells
            .chunks_exact(n.max(1))
            .enumerate()
            .flat_map(|(i, row)| (i + 1..n).map(move |j| (i, j, row[j])));
        upper.filter(|&(_, _, x)| x.is_nan()).map(|(i, j, _)| (i, j)).collect()
    }
}

/// Equal entries, missing ones equal to each other.
impl PartialEq for MemberPayoffs {
    fn eq(&self, other: &Self) -> bool {
        self.n == other.n
            && self.cells.iter().zip(&other.cells).all(|(a, b)| a == b || (a.is_nan() && b.is_nan()))
    }
}

/// A table as rows (a checkpoint from before the payoff log kept it inline); a ragged one
/// (rows of other lengths) is squared with `None`.
impl From<Vec<Vec<Option<f64>>>> for MemberPayoffs {
    fn from(rows: Vec<Vec<Option<f64>>>) -> Self {
        let n = rows.iter().map(Vec::len).max().unwrap_or(0).max(rows.len());
        let entry = |i: usize, j: usize| rows.get(i).and_then(|r| r.get(j)).copied().flatten();
        let mut table = MemberPayoffs { n, cells: vec![f64::NAN; n * n] };
        for i in 0..n {
            for j in i + 1..n {
                table.set_pair(i, j, entry(i, j), entry(j, i));
            }
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_clears_and_removes_like_rows_of_options() {
        let rows =
            vec![vec![None, Some(0.5), Some(-1.0)], vec![Some(-0.5), None, None], vec![Some(1.0), None]];
        let t = MemberPayoffs::from(rows);
        assert_eq!(
            (t.len(), t.get(0, 2), t.get(2, 0), t.get(2, 2), t.get(5, 0)),
            (3, Some(-1.0), Some(1.0), None, None)
        );
        assert_eq!(t.missing_pairs(), vec![(1, 2)]);
        let mut h = t.clone();
        h.set_pair(0, 1, Some(2.0), None);
        assert_eq!((h.get(0, 1), h.get(1, 0), h.missing_pairs()), (None, None, vec![(0, 1), (1, 2)]));
        let mut g = t.resized(4);
        assert_eq!(
            (g.len(), g.row(0), g.column(3)),
            (4, vec![None, Some(0.5), Some(-1.0), None], vec![None; 4])
        );
        assert_eq!(g.missing_pairs(), vec![(0, 3), (1, 2), (1, 3), (2, 3)]);
        g.clear_member(0);
        assert_eq!((g.row(0), g.column(0)), (vec![None; 4], vec![None; 4]));
        assert_eq!(g.get(1, 0), None);
        let mut r = t.clone();
        r.remove(1);
        assert_eq!((r.len(), r.row(0), r.row(1)), (2, vec![None, Some(-1.0)], vec![Some(1.0), None]));
        assert_eq!(t.resized(2).row(1), vec![Some(-0.5), None]);
        let mut mapped = vec![3.0; 20];
        t.map_into(&mut mapped, |x| x.unwrap_or(7.0));
        assert_eq!(mapped, vec![7.0, 0.5, -1.0, -0.5, 7.0, 7.0, 1.0, 7.0, 7.0]);
        assert_eq!(t.resized_into(2, vec![9.0; 50]), t.resized(2));
        assert!(MemberPayoffs::default().is_empty() && MemberPayoffs::default().missing_pairs().is_empty());
    }
}
