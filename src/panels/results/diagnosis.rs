//! Why the target that sets the fleet binds, under the verdict's sentence
//! naming it: the engine's diagnosis in words (the step time each class
//! takes, prefill in the binding class's steps, KV pressure) and the
//! levers tried against it, with the saving of each (`levers_table`).

use leptos::prelude::*;
use sojourn_engine::{PlanResult, levers_table};

use super::TableView;

#[component]
pub(super) fn BindingDiagnosis(plan: PlanResult) -> impl IntoView {
    let table = levers_table(&plan);
    plan.diagnosis_sentence().map(|sentence| {
        view! {
            <div class="verdict-diagnosis" id="binding-diagnosis">
                <p>
                    <strong>"Why it binds: "</strong>
                    {sentence}
                </p>
                {table.map(|table| view! { <TableView table=table open=true /> })}
            </div>
        }
    })
}
