"""What each LMS writes: its roster exports and the names in its submission downloads."""
