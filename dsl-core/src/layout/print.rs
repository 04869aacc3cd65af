//! 2-D table printer like CuTe's `print_layout`. (Being written.)
