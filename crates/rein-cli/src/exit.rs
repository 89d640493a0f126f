//! Exit codes, as DESIGN.md fixes them: 0 success or pass, 1 a verdict of fail, 2 bad input or
//! refusal, 3 a model or worker failure.

pub const BAD_INPUT: i32 = 2;

/// The exit code for an error that reached the top: the model layer knows its own; anything
/// else is bad input.
pub fn code_for(error: &anyhow::Error) -> i32 {
    for cause in error.chain() {
        if let Some(e) = cause.downcast_ref::<rein_models::ModelError>() {
            return e.exit_code();
        }
    }
    BAD_INPUT
}
