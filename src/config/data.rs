//! `[data]` of `ppcert.toml` over the scenario's: the booking-number pattern, checked once
//! against the run's size so a pattern too narrow for the run stops it before anything is sent.

use super::error::ConfigError;
use super::file::FileConfig;
use crate::datagen::DataProfile;
use crate::scenario::FileError;

/// Puts the file's pattern over the scenario's and checks that whichever is in force gives
/// `bookings` distinct numbers; the error names the file and key it came from.
pub(super) fn apply(
    profile: &mut DataProfile,
    file: &FileConfig,
    file_name: &str,
    bookings: u64,
    scenario_file: &str,
) -> Result<(), ConfigError> {
    let from_file = file.data.booking_number_pattern.is_some();
    if from_file {
        profile.booking_number_pattern = file.data.booking_number_pattern.clone();
    }
    let Some(pattern) = &profile.booking_number_pattern else {
        return Ok(());
    };
    // The seed changes which numbers, not how many a pattern can give.
    crate::datagen::numbers::draw(pattern, 0, bookings).map_err(|why| {
        let error = FileError {
            file: if from_file { file_name } else { scenario_file }.to_string(),
            line: None,
            message: format!("data.booking_number_pattern: {why}"),
        };
        if from_file {
            ConfigError::File(error.into())
        } else {
            ConfigError::Scenario(error)
        }
    })?;
    Ok(())
}
