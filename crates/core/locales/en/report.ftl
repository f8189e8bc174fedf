# The operator's daily report in English (`[i18n] operator_locale`).
# Channel, frequency and status names are shown as digestd stores them.

report-subject = digestd report { $date }
report-title = digestd { $version } report at { $at }
report-digests-since = Digests since { $since }:
report-none-due = none due
report-channel = channel
report-frequency = frequency
report-due = due
report-posted = posted
report-empty = empty
report-sent = sent
report-failed = failed
report-bounces = Bounces: { $hard } hard, { $soft } soft; addresses disabled: { $disabled }
report-retries = Retries pending: { $count }
report-oldest = Oldest unfinished request: { $id } ({ $status }), posted { $at }
report-oldest-none = Oldest unfinished request: none
report-latest-tick = Latest tick: { $at }
report-latest-run = Latest digest out: subscription { $subscription } period { $period }, due { $due }, sent { $sent } ({ $late } s late)
report-latest-run-none = Latest digest out: none in the 24 hours
report-lease = Lease { $job }: held by { $holder }; last run { $at }
report-nobody = nobody
report-never = never
