"""The dialog family: find and book something for a user whose needs arrive over turns."""
