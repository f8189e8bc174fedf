DROP TABLE group_prefs;
