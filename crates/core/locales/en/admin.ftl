# The operator's pages under /admin in English (`[i18n] operator_locale`).
# Status, channel, kind and outcome names are said in it (links, filters
# and forms keep the stored word); times are UTC, or in a subscriber's own
# zone and clock. Every other catalogue has the same keys and uses the same
# variables.

## Every page

admin-site = digestd admin
admin-footer = digestd · operator pages
admin-nav-status = Status
admin-nav-requests = Requests
admin-nav-subscribers = Subscribers
admin-nav-grid = Grid
admin-signed-in = signed in with token { $token }
admin-logout = Log out
admin-not-done = Not done
admin-back = Back
admin-filter = Filter
admin-yes = yes
admin-no = no

## Login

admin-login = Operator login
admin-login-token = Admin token
admin-login-note = An API token of scope admin ({ $command }). It is exchanged for a session cookie; the token itself is not kept in the browser.
admin-login-button = Log in
admin-login-bad = That is not a valid admin token. Nothing was changed.
admin-login-many = Too many failed logins from this network: try again in 15 minutes. Nothing was checked.
admin-login-expired = This form expired: enter the token again. Nothing was checked.

## Status

admin-status-at = Status at { $now }
admin-queue = Queue
admin-th-status = status
admin-th-requests = requests
admin-oldest-pending = Oldest pending request:
admin-ticks = Last ticks
admin-ticks-none = No tick has recorded a run yet.
admin-th-tick-at = tick at
admin-th-runs = runs
admin-th-digests = digests
admin-th-empty-runs = empty runs
admin-th-late = latest run late by
admin-ticks-note = Ticks as their runs recorded them (a tick that found nothing due records no run). How long each tick took is not stored; this process's tick durations are at { $metrics } ({ $metric }).
admin-leases = Leases
admin-leases-none = No job has run yet.
admin-th-job = job
admin-th-holder = held by
admin-th-until = until
admin-th-last-run = last run
admin-events = Operators' events
admin-events-note = Waiting: all of them; sent, failed and skipped: those of the last 24 hours.
admin-th-events = events
admin-events-oldest = Oldest event waiting:
admin-events-failure = Last failure:
admin-events-commands = { $list } shows them; { $replay } posts a span again.
admin-events-off = not posted: [events] url is empty
admin-events-to = posted to { $url }
admin-event-failed = event { $id } ({ $kind }): { $error }
admin-on-time = on time
admin-delay-s = { $s } s
admin-delay-min = { $min } min { $s } s
admin-delay-h = { $h } h { $min } min
admin-ago = { $at } ({ $delay } ago)
admin-just-now = { $at } (just now)
admin-none-pending = none pending
admin-nobody = nobody
admin-expired-lease = nobody (expired lease of { $holder })
admin-never = never

## Requests

admin-filter-status = Status
admin-requests-any = any
admin-filter-sender = Sender
admin-filter-recipient = Recipient
admin-requests-none = No request matches.
admin-th-id = id
admin-th-kind = kind
admin-th-from = from
admin-th-to = to
admin-th-subject = subject
admin-th-requested = requested
admin-th-finished = finished
admin-requests-older = Older requests
admin-request = Request { $id }
admin-cancel = Cancel this request
admin-cancel-note = What is not delivered yet is never sent.
admin-cancelled = Cancelled.
admin-recipients = Recipients
admin-not-expanded = Not expanded yet: a queue pass has not taken it.
admin-no-recipient = No one: every member of the group opted out of it, or the group had no member.
admin-th-party = party
admin-th-channel = channel
admin-th-address = address
admin-th-state = state
admin-th-retries = retries
admin-th-last-reply = last reply
admin-delivered = delivered
admin-gave-up = gave up
admin-open = open
admin-attempts = Attempts
admin-attempts-none = No attempt yet.
admin-th-when = when
admin-th-outcome = outcome
admin-th-reply = reply
admin-all-requests = All requests

## Subscribers and a subscription

admin-filter-name = Name contains
admin-filter-disabled = Only with a disabled address
admin-users-none = No user matches.
admin-th-verified = verified
admin-th-bounces = bounces
admin-disabled = disabled
admin-enabled = enabled
admin-reenable = Re-enable
admin-enabled-notice = Enabled: messages go to that address again; its bounce count starts over.
admin-no-subscriptions = No subscriptions.
admin-their-time = { $when } (their time)
admin-paused = paused
admin-details = details
admin-opted-out = Opted out of group subscriptions:
admin-more = More
admin-subscription = Subscription { $id }
admin-party-time = { $when } ({ $party }'s time)
admin-optouts = Members who opted out
admin-optouts-none = No one: its digests reach every member.
admin-optouts-note = Its digests leave these members out until they, or you, clear it.
admin-th-member = member
admin-th-since = since
admin-clear = Clear
admin-cleared = Cleared: the group's digests reach that member again from the next one.

## The week grid (its drawing and table too; `digestd grid` stays English)

admin-grid = Week grid
admin-grid-hours = Hours in
admin-grid-server = server time (UTC)
admin-grid-local = each subscriber's local time
admin-grid-week = Week of
admin-grid-user = User
admin-grid-all = all
admin-grid-show = Show
admin-grid-table = As a table
admin-grid-title = digests in the week of { $week } ({ $scope })
admin-grid-scope-all = all users
admin-grid-scope-user = user { $user }
admin-grid-table-title = { $title }, { $time }
admin-grid-time-local = local time
admin-grid-time-server = server time (UTC)
admin-grid-subtitle = Digests per hour of the week, { $time }
admin-grid-cell = { $day } { $hour } { $time }: { $digests ->
    [one] { $digests } digest
   *[other] { $digests } digests
}, { $empty ->
    [one] { $empty } empty run
   *[other] { $empty } empty runs
}
admin-grid-dot = { $empty ->
    [one] { $empty } empty run
   *[other] { $empty } empty runs
}
admin-grid-hour-axis = hour of the day ({ $time })
admin-grid-day-axis = day
admin-grid-scale = digests per hour:
admin-grid-empty-runs = { $empty ->
    [one] { $empty } empty run
   *[other] { $empty } empty runs
} (ran, nothing to send) not counted
admin-grid-peak = peak: { $day } { $hour } with { $digests } of { $total ->
    [one] { $total } digest
   *[other] { $total } digests
}
admin-grid-total = total

## The names of what the queue stores (links, filters and forms keep the
## stored word; English shows it as stored)

admin-status-pending = pending
admin-status-sending = sending
admin-status-sent = sent
admin-status-partial-failure = partial_failure
admin-status-failed = failed
admin-status-cancelled = cancelled
admin-event-status-pending = pending
admin-event-status-sent = sent
admin-event-status-failed = failed
admin-event-status-skipped = skipped
admin-kind-digest = digest
admin-kind-notification = notification
admin-outcome-sent = sent
admin-outcome-transient = transient
admin-outcome-permanent = permanent
admin-outcome-gave-up = gave_up

## What a filter or a form refused (a value as given is shown escaped and
## cut; nothing was changed)

admin-refused-long = The field “{ $field }” is longer than { $max } characters.
admin-refused-control = The field “{ $field }” holds a control character, which is not allowed.
admin-refused-status = “{ $value }” is not a status: choose one from the list.
admin-refused-name = “{ $value }” is not a name: use 1 to { $max } letters, digits, “.”, “_” or “-”.
admin-refused-no-party = No user or group is named “{ $value }”.
admin-refused-before = “{ $value }” is not a request id.
admin-refused-disabled = “{ $value }” is not a value of “{ admin-filter-disabled }”: use 1 or nothing.
admin-refused-time = “{ $value }” is not one of the grid's clocks: choose { admin-grid-server } or { admin-grid-local }.
admin-refused-week = “{ $value }” is not an instant: use RFC 3339, e.g. 2026-11-23T00:00:00Z.
admin-refused-channel = “{ $value }” is not a channel.
admin-refused-no-request = There is no such request.
admin-refused-no-subscription = There is no such subscription.
admin-refused-not-open = This request is already { $status }: only pending or sending requests can be cancelled.
admin-refused-no-address = { $party } has no { $channel } address.
admin-refused-not-opted-out = { $member } has not opted out of this subscription.
