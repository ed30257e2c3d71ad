//! What the plan compares (`plan.search`): the service disciplines as
//! checkboxes, and under "Advanced" the engine and cluster settings it can
//! open (sequence limits, token budgets, admission limits as lists; routers
//! as checkboxes). A dimension left at its default stays out of the scenario
//! (`None`), so links and files keep their old form.

use leptos::prelude::*;
use sojourn_engine::ScenarioParams;

use crate::help;
use crate::panels::at::{At, at};
use crate::panels::fields::{check, counts, fields, limits};
use crate::panels::serving::{DISCIPLINES, ROUTERS};
use crate::panels::{FieldMessage, LazyDetails};
use crate::registry::{Words, enum_text, inputs};
use crate::state::AppState;

/// Reads a dimension's listed values.
type Listed<T> = fn(&ScenarioParams) -> &Option<Vec<T>>;
/// Changes a dimension's listed values.
type ListedMut<T> = fn(&mut ScenarioParams) -> &mut Option<Vec<T>>;

/// A dimension of enum values shown as one checkbox per value: `order` is
/// every value in the order written back, `default` the values searched
/// when the scenario lists none.
struct Dimension<T: 'static> {
    path: &'static str,
    order: &'static [(T, &'static str)],
    listed: Listed<T>,
    listed_mut: ListedMut<T>,
    default: fn(&ScenarioParams) -> Vec<T>,
}

impl<T: Copy + PartialEq + serde::Serialize + Send + Sync + 'static> Dimension<T> {
    /// Whether `value` is searched, as a checkbox: ticking and unticking
    /// rewrite the list in `order`, and a list equal to the default is
    /// left out of the scenario.
    fn member(&self, value: T) -> At<bool> {
        let (listed, listed_mut, default, order) =
            (self.listed, self.listed_mut, self.default, self.order);
        At::new(
            format!("{}.{}", self.path, enum_text(&value)),
            move |p| {
                let values = listed(p).clone().unwrap_or_else(|| default(p));
                Some(values.contains(&value))
            },
            move |p, ticked| {
                let current = listed(p).clone().unwrap_or_else(|| default(p));
                let next = toggled(order.iter().map(|(v, _)| *v), &current, value, ticked);
                let mut as_default = default(p);
                as_default.sort_by_key(|v| order.iter().position(|(o, _)| o == v));
                *listed_mut(p) = (next != as_default).then_some(next);
            },
        )
    }

    /// One checkbox per value, then the list's own message.
    fn view(&self, state: AppState, help: &'static str) -> impl IntoView + use<T> {
        let boxes = self
            .order
            .iter()
            .map(|(value, label)| check(self.member(*value), Words::new(*label, "", help)))
            .collect();
        view! {
            <div class="grid checks">{fields(state, boxes)}</div>
            <FieldMessage state path=self.path />
        }
    }
}

/// `current` with `value` ticked in or out, in the order `order` gives.
pub(crate) fn toggled<T: Copy + PartialEq>(
    order: impl IntoIterator<Item = T>,
    current: &[T],
    value: T,
    ticked: bool,
) -> Vec<T> {
    order
        .into_iter()
        .filter(|v| {
            if *v == value {
                ticked
            } else {
                current.contains(v)
            }
        })
        .collect()
}

const SEARCHED_DISCIPLINES: Dimension<sojourn_engine::Discipline> = Dimension {
    path: "plan.search.disciplines",
    order: &DISCIPLINES,
    listed: |p| &p.plan.search.disciplines,
    listed_mut: |p| &mut p.plan.search.disciplines,
    default: |_| DISCIPLINES.iter().map(|(d, _)| *d).collect(),
};

const SEARCHED_ROUTERS: Dimension<sojourn_engine::Router> = Dimension {
    path: "plan.search.routers",
    order: &ROUTERS,
    listed: |p| &p.plan.search.routers,
    listed_mut: |p| &mut p.plan.search.routers,
    default: |p| vec![p.cluster.router],
};

/// The search space's inputs, beside the hardware options.
#[component]
pub fn SearchSpace(state: AppState) -> impl IntoView {
    let settings = move || {
        let rows = vec![
            counts(at!(plan.search.max_num_seqs), &inputs::SEARCH_MAX_NUM_SEQS)
                .placeholder("the scenario's own"),
            counts(
                at!(plan.search.max_num_batched_tokens),
                &inputs::SEARCH_MAX_NUM_BATCHED_TOKENS,
            )
            .placeholder("the scenario's own"),
            limits(at!(plan.search.max_waiting), &inputs::SEARCH_MAX_WAITING)
                .placeholder("the scenario's own"),
        ];
        view! {
            <div class="grid">{fields(state, rows)}</div>
            <p class="panel-note">"Routers compared"</p>
            {SEARCHED_ROUTERS.view(state, help::SEARCH_ROUTERS)}
        }
    };
    view! {
        <fieldset class="search-space">
            <legend>"What the plan compares"</legend>
            <p class="panel-note">{help::SEARCH_SPACE}</p>
            {SEARCHED_DISCIPLINES.view(state, help::SEARCH_DISCIPLINES)}
            <LazyDetails summary="Advanced: engine and cluster settings compared">
                {settings()}
            </LazyDetails>
            <FieldMessage state path="plan.search" />
        </fieldset>
    }
}

#[cfg(test)]
mod tests {
    use sojourn_engine::{Discipline, Router, Scenario};

    use super::*;

    /// Ticking and unticking rewrite the list in the planner's order and
    /// leave a list equal to the default out of the scenario, so an
    /// untouched scenario's file and link keep their old form.
    #[test]
    fn checkboxes_write_the_list_and_leave_the_default_out() {
        let mut p = ScenarioParams::overnight_batch();
        assert_eq!(p.plan.search.disciplines, None);
        let priority = SEARCHED_DISCIPLINES.member(Discipline::Priority);
        assert_eq!(priority.path, "plan.search.disciplines.priority");
        assert_eq!((priority.get)(&p), Some(true), "all four by default");
        (priority.set)(&mut p, false);
        assert_eq!(
            p.plan.search.disciplines,
            Some(vec![
                Discipline::Fcfs,
                Discipline::ShortestInputFirst,
                Discipline::EarliestDeadlineFirst
            ])
        );
        assert_eq!((priority.get)(&p), Some(false));
        (priority.set)(&mut p, true);
        assert_eq!(p.plan.search.disciplines, None);

        // Routers: the scenario's own alone by default.
        let own = p.cluster.router;
        let other = ROUTERS.iter().map(|(r, _)| *r).find(|r| *r != own).unwrap();
        assert_eq!((SEARCHED_ROUTERS.member(own).get)(&p), Some(true));
        assert_eq!((SEARCHED_ROUTERS.member(other).get)(&p), Some(false));
        (SEARCHED_ROUTERS.member(other).set)(&mut p, true);
        let listed = p.plan.search.routers.clone().expect("two routers listed");
        assert_eq!(listed.len(), 2);
        assert!(listed.contains(&own) && listed.contains(&other));
        (SEARCHED_ROUTERS.member(other).set)(&mut p, false);
        assert_eq!(p.plan.search.routers, None);
        // The own router follows the serving panel's while none is listed.
        p.cluster.router = Router::RoundRobin;
        assert_eq!(
            (SEARCHED_ROUTERS.member(Router::RoundRobin).get)(&p),
            Some(true)
        );
    }

    /// Unticking every discipline leaves an empty list, which the engine
    /// refuses under the path whose message the checkboxes show.
    #[test]
    fn no_discipline_ticked_is_refused_under_the_checkboxes_path() {
        let mut p = ScenarioParams::overnight_batch();
        for (d, _) in DISCIPLINES {
            (SEARCHED_DISCIPLINES.member(d).set)(&mut p, false);
        }
        assert_eq!(p.plan.search.disciplines, Some(vec![]));
        let e = Scenario::try_from(p).unwrap_err();
        assert!(
            e.for_field(SEARCHED_DISCIPLINES.path)
                .is_some_and(|r| r.contains("at least one value")),
            "{e}"
        );
    }
}
