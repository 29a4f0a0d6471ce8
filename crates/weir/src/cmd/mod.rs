//! One module per subcommand: its flags (clap `Args`) and the glue that calls the libraries.

pub mod align;
pub mod doctor;
pub mod explore;
pub mod qualify;
pub mod report;
pub mod run;
mod run_groups;
mod run_sim;
pub mod tune;
