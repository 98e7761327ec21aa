"""Layer 6: text layout shared by the answers' text outputs."""
