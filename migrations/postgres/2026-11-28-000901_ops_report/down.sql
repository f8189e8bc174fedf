DROP TABLE ops_reports;
