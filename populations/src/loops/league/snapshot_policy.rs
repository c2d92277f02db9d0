//! `SnapshotPolicy`: what a frozen league member plays — a table of the game's tree (both
//! seats in one), or, where the league trains networks, its two seat networks, each kept in
//! the run folder as a file named by its hash ([`MemberPolicy`]) — and [`SeatPolicies`],
//! the two played as one policy.

use std::sync::Arc;

use metagame_games::{Decisions, Device, Policy, TabularPolicy};
use ndarray::ArrayViewMut2;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::member_policy::{MemberPolicy, StoredPolicy};

/// A snapshot's policy.
///
/// In a checkpoint a table is written inline, as before leagues trained networks, and a
/// pair of seat policies as a list of two `{kind, file, sha256}` (a list never reads as a
/// table, so the order of the variants decides nothing).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SnapshotPolicy {
    /// Seat 0's policy and seat 1's (networks, kept as files).
    Seats(Box<[MemberPolicy; 2]>),
    /// A table of the game's tree, both seats; shared, so that a checkpoint's copy of the
    /// state costs O(members), not O(members · policy).
    Table(Arc<TabularPolicy>),
}

impl From<TabularPolicy> for SnapshotPolicy {
    fn from(table: TabularPolicy) -> Self {
        SnapshotPolicy::Table(Arc::new(table))
    }
}

impl SnapshotPolicy {
    /// The table, for a snapshot that is one.
    pub fn as_table(&self) -> Option<&TabularPolicy> {
        match self {
            SnapshotPolicy::Table(t) => Some(t),
            SnapshotPolicy::Seats(_) => None,
        }
    }

    /// The policy to play at both seats.
    ///
    /// # Errors
    ///
    /// [`Error::SavedState`](crate::Error::SavedState) for a seat policy read from a
    /// checkpoint and not loaded from its file yet.
    pub fn playing(&self) -> Result<Arc<dyn Policy>> {
        match self {
            SnapshotPolicy::Table(t) => Ok(Arc::clone(t) as Arc<dyn Policy>),
            SnapshotPolicy::Seats(seats) => {
                Ok(Arc::new(SeatPolicies([seats[0].shared()?, seats[1].shared()?])))
            }
        }
    }

    /// The seat policies (none for a table).
    fn seats(&self) -> &[MemberPolicy] {
        match self {
            SnapshotPolicy::Seats(seats) => &seats[..],
            SnapshotPolicy::Table(_) => &[],
        }
    }

    /// The seat policies kept as files (none for a table).
    pub fn stored(&self) -> impl Iterator<Item = &StoredPolicy> {
        self.seats().iter().filter_map(MemberPolicy::as_stored)
    }

    /// The seat policies kept as files, to load them.
    pub fn stored_mut(&mut self) -> impl Iterator<Item = &mut StoredPolicy> {
        let seats: &mut [MemberPolicy] = match self {
            SnapshotPolicy::Seats(seats) => &mut seats[..],
            SnapshotPolicy::Table(_) => &mut [],
        };
        seats.iter_mut().filter_map(MemberPolicy::as_stored_mut)
    }

    /// The files of seat policies made this run, for the run's driver to write.
    pub fn pending_files(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.seats().iter().filter_map(MemberPolicy::pending_file)
    }
}

/// Two policies played as one: `seats[p]` answers the decisions of player `p`. A learning
/// agent of a league trains one network per seat, and plays both seats with them.
#[derive(Clone)]
pub struct SeatPolicies(pub [Arc<dyn Policy>; 2]);

impl std::fmt::Debug for SeatPolicies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SeatPolicies").field(&self.0[0].kind()).field(&self.0[1].kind()).finish()
    }
}

impl Policy for SeatPolicies {
    fn probabilities(
        &self,
        decisions: &Decisions<'_>,
        out: ArrayViewMut2<'_, f32>,
    ) -> metagame_games::Result<()> {
        match self.0.get(decisions.player.0) {
            Some(policy) => policy.probabilities(decisions, out),
            None => Err(metagame_games::Error::Shape(format!(
                "a policy of two seats asked for player {}",
                decisions.player.0
            ))),
        }
    }

    fn kind(&self) -> &str {
        "seats"
    }

    /// Both seats placed where the device runs them; a seat it does not run stays.
    fn on_device(&self, device: &dyn Device) -> Option<Arc<dyn Policy>> {
        let placed = self.0.each_ref().map(|p| p.on_device(device));
        if placed.iter().all(Option::is_none) {
            return None;
        }
        let [first, second] = placed;
        let [a, b] = &self.0;
        Some(Arc::new(SeatPolicies([
            first.unwrap_or_else(|| a.clone()),
            second.unwrap_or_else(|| b.clone()),
        ])))
    }
}

#[cfg(test)]
mod tests {
    use metagame_games::{FirstAction, GameTree, PlayerId, Uniform, registry};
    use ndarray::{Array2, array};

    use super::*;

    #[test]
    fn each_seat_plays_its_own_policy_and_tables_read_as_before() {
        let both = SeatPolicies([Arc::new(Uniform), Arc::new(FirstAction)]);
        let answer = |p: usize| answer_at(&both, 0, array![[true, true, false]], p);
        assert_eq!(answer(0).unwrap(), array![[0.5, 0.5, 0.0]]);
        assert_eq!(answer(1).unwrap(), array![[1.0, 0.0, 0.0]]);
        assert!(answer(2).is_err());

        // A table is written inline, as checkpoints from before networks hold it.
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let table = TabularPolicy::uniform(&tree);
        let snapshot = SnapshotPolicy::from(table.clone());
        let text = serde_json::to_string(&snapshot).unwrap();
        assert_eq!(text, serde_json::to_string(&table).unwrap());
        let back: SnapshotPolicy = serde_json::from_str(&text).unwrap();
        assert_eq!(back.as_table(), Some(&table));
        assert_eq!(back.stored().count(), 0);
    }

    /// `policy`'s answer at one decision of `player` with `width` zeros for its tensor.
    fn answer_at(
        policy: &dyn Policy,
        width: usize,
        legal: Array2<bool>,
        player: usize,
    ) -> metagame_games::Result<Array2<f32>> {
        let tensors = Array2::<f32>::zeros((1, width));
        let d = Decisions {
            player: PlayerId(player),
            tensors: tensors.view(),
            legal: legal.view(),
            infosets: None,
        };
        let mut out = Array2::<f32>::zeros(legal.dim());
        policy.probabilities(&d, out.view_mut()).map(|()| out)
    }

    /// A device that plays every network it is offered as `FirstAction`.
    struct FirstActionDevice;

    impl Device for FirstActionDevice {
        fn place(&self, policy: &dyn std::any::Any) -> Option<Arc<dyn Policy>> {
            policy.is::<metagame_networks::Mlp>().then(|| Arc::new(FirstAction) as Arc<dyn Policy>)
        }
    }

    /// Placing both seats places the network seat and keeps the other; with no network
    /// there is nothing to place.
    #[test]
    fn placing_the_seats_places_each_network_seat() {
        let mlp = metagame_networks::Mlp::random(&[2, 3], 1).unwrap();
        let both = SeatPolicies([Arc::new(Uniform), Arc::new(mlp)]);
        let placed = both.on_device(&FirstActionDevice).expect("one seat is a network");
        let answer = |p: usize| answer_at(&*placed, 2, array![[false, true, true]], p).unwrap();
        assert_eq!(answer(0), array![[0.0, 0.5, 0.5]]);
        assert_eq!(answer(1), array![[0.0, 1.0, 0.0]]);
        assert!(
            SeatPolicies([Arc::new(Uniform), Arc::new(FirstAction)]).on_device(&FirstActionDevice).is_none()
        );
    }
}
