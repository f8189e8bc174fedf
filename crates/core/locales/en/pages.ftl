# The person's pages in English: manage, unsubscribe, sign-up and its
# confirmation, the whole digest, and the one-message pages. Every other
# catalogue has the same keys and uses the same variables.

## Every page

page-manage-link = Manage your digests
page-bad-link-title = This link is not valid
page-bad-link = This link is not valid. Use the newest link from one of your digests.
page-not-done = Not done
page-not-a-form = The form must be sent as a form. Nothing was changed.
page-expired-title = Form expired
page-expired = This form is not valid any more: nothing was changed. Open the page again and retry.
page-failed-title = Something went wrong
page-failed = Something went wrong on our side; nothing was changed. Try again later.
page-too-large = The form is larger than this server takes. Nothing was changed.
page-busy = The server is busy; nothing was changed. Try again in a moment.
page-language = Language

## A subscription as a page describes it

when-hourly = Every hour
when-daily = Daily at { $hour }
when-weekly = Weekly on { $day } at { $hour }
frequency-hourly = Every hour
frequency-daily = Daily
frequency-weekly = Weekly
kind-changes = changes
kind-upcoming = upcoming items
collection-numbered = collection { $id }
sub-by = by { $channels }
channel-email = email
channel-xmpp = xmpp
channel-sms = sms
channel-webhook = webhook
channel-slack = slack
channel-discord = discord
channel-teams = teams
channel-ntfy = ntfy
channel-matrix = matrix
sub-paused = paused
sub-through-group = through group { $group }
sub-through-group-yours = through group { $group } (for you only: the group keeps it)
sub-group-time = { $when } (the group's time)
sub-paused-by-group = paused by the group
sub-stopped-for-you = stopped for you
sub-already-paused = already paused
sub-already-stopped = already stopped for you

## The manage page

manage-title = Your digests
manage-heading = Your digests, { $name }
manage-times-hour12 = Times are in { $zone } ({ $abbr }), on the 12-hour clock.
manage-times-hour24 = Times are in { $zone } ({ $abbr }), on the 24-hour clock.
manage-subs-heading = Subscriptions
manage-none = You have no subscriptions.
manage-time = Time
manage-change-time = Change time
manage-send-now = Send it now
manage-resume = Resume
manage-pause = Pause
manage-unsubscribe = Unsubscribe
manage-for-good = for good
manage-end = End
manage-cadence = How often and where
manage-how-often = How often
manage-at = At (daily and weekly)
manage-on = On (weekly)
manage-by = By
manage-cadence-note = The next digest comes at the new time and holds everything since the last one.
manage-save = Save
manage-groups = Through your groups
manage-groups-note = A group you are in subscribed to these. Stopping one stops it for you only: the group keeps it.
manage-optin = Undo: send it to me again
manage-optout = Stop sending me this
manage-settings = Your settings
manage-timezone = Timezone
manage-daily-hour = New daily digests at (now { $hour })
manage-week-start = Weeks start on (now { $day })
manage-locale = Language and region
manage-quiet = Quiet hours (from-to, e.g. 22:00-07:00; empty for none)
manage-quiet-note = Notifications wait until your quiet hours end, and hourly digests inside them come together in the first one after. Daily and weekly digests are still sent.
manage-quiet-inside = { $what }: sent at { $hour }, inside your quiet hours: digests are still sent; only notifications and hourly digests wait.
manage-where = Where digests go
contact-verified = verified
contact-not-verified = not verified
contact-disabled = disabled (bounced)
contact-by-operator = set by the operator
manage-matrix = Matrix ID
manage-matrix-now = Matrix ID (now { $id })
manage-matrix-note = Your user ID (@you:example.org): digests come from our account in a direct room, once you accept its invitation. Or a room ID (!room:example.org) of a room you invited our account to.
manage-matrix-change = Change Matrix ID
manage-matrix-add = Add Matrix ID
manage-matrix-remove = Remove Matrix ID
manage-new-link = A new link
manage-new-link-note = If someone else may have this page's link (a forwarded digest, a shared screen), get a new one: it is mailed to your email address and this link stops working. Unsubscribe links in digests you already received still work.
manage-new-link-button = Send me a new link
manage-stop = Stop everything
manage-stop-note = Pauses every subscription, stops every group's digest for you and cancels what is queued. You can resume each one here.
manage-stop-button = Stop all digests

## What a change on the manage page says after it

done-pause = Paused. It sends nothing until you resume it.
done-resume = Resumed: the next digest comes at its next time, without what happened while it was paused.
done-hour = Changed: the next digest comes at the new time.
done-cadence = Changed: the next digest comes at the new time and holds everything since the last one.
done-flushed = Sent: the digest is on its way. The next one holds only what changes from now on.
done-nothing = Nothing is waiting: nothing was sent.
done-end = Ended for good.
done-prefs = Saved. Your digests follow the new settings from their next time.
done-stop = Everything is stopped: every subscription is paused, no group's digest is sent to you, and nothing queued will be sent.
done-optout = Stopped for you: the group keeps its digest and its other members still get it. Undo it here whenever you like.
done-optin = Back on: the group's digests reach you again from their next time.
done-matrix = Saved: digests by Matrix go to the new ID from their next time.
done-unmatrix = Removed: nothing more is sent to you by Matrix.
new-link-title = A new link is on its way
new-link-sent = We sent a new link to your email address. The link you used to come here no longer opens this page; unsubscribe links in digests you received still work.
refused-end = tick the box to confirm that this subscription ends for good
refused-channels = choose at least one way to get it
refused-no-matrix = you have no Matrix ID to remove

## A field's own check refused a value: the value as given (`$value`: its
## first 64 characters, every control character, line break and direction
## mark escaped) and what is wrong with it. The CLI and the API say the
## same in English on one line.

refusal-timezone-malformed = invalid timezone “{ $value }”: choose one from the list
refusal-timezone-unknown = unknown IANA timezone “{ $value }”: choose one from the list
refusal-timezone-nearest = unknown IANA timezone “{ $value }”: did you mean { $nearest }?
refusal-locale = invalid locale “{ $value }”: use a tag like en-US
refusal-hour = invalid hour “{ $value }”: use a whole hour from 0 to 23
refusal-quiet-hint = use HH:MM-HH:MM, e.g. 22:00-07:00, or leave the field empty for none
refusal-quiet-long = invalid quiet hours “{ $value }”: longer than { $max } bytes ({ refusal-quiet-hint })
refusal-quiet-char = invalid quiet hours “{ $value }”: { $code } is not an ASCII digit or “-” ({ refusal-quiet-hint })
refusal-quiet-dash = invalid quiet hours “{ $value }”: no “-” between start and end ({ refusal-quiet-hint })
refusal-quiet-start = invalid quiet hours “{ $value }”: the start, “{ $part }”, is not HH:MM ({ refusal-quiet-hint })
refusal-quiet-end = invalid quiet hours “{ $value }”: the end, “{ $part }”, is not HH:MM ({ refusal-quiet-hint })
refusal-quiet-same = invalid quiet hours “{ $value }”: start and end are the same ({ refusal-quiet-hint })
refusal-matrix-hint = use @user:server or !room:server
refusal-matrix-empty = invalid Matrix ID: it is empty ({ refusal-matrix-hint })
refusal-matrix-long = invalid Matrix ID “{ $value }”: it is longer than { $max } bytes ({ refusal-matrix-hint })
refusal-matrix-space = invalid Matrix ID “{ $value }”: it contains white space ({ refusal-matrix-hint })
refusal-matrix-char = invalid Matrix ID “{ $value }”: it contains a control or non-ASCII character ({ refusal-matrix-hint })
refusal-matrix-no-server = invalid Matrix ID “{ $value }”: it names no server (:server) ({ refusal-matrix-hint })
refusal-matrix-no-local = invalid Matrix ID “{ $value }”: there is nothing before the “:” ({ refusal-matrix-hint })
refusal-matrix-sigil = invalid Matrix ID “{ $value }”: it starts with neither @ (a user) nor ! (a room)
refusal-matrix-port = invalid Matrix ID “{ $value }”: its server's port is not 1-65535 ({ refusal-matrix-hint })
refusal-matrix-server = invalid Matrix ID “{ $value }”: its server name is not a host name or an IP address ({ refusal-matrix-hint })
refusal-email-control = invalid email address “{ $value }”: it contains a control character
refusal-email-non-ascii = invalid email address “{ $value }”: addresses with accents or other non-ASCII characters are not supported
refusal-email-long = invalid email address “{ $value }”: it is longer than 254 characters
refusal-email-no-at = invalid email address “{ $value }”: it has no “@”
refusal-email-local-length = invalid email address “{ $value }”: the part before the “@” must be 1 to 64 characters
refusal-email-dots = invalid email address “{ $value }”: a dot before the “@” is misplaced (at the start, at the end, or two in a row)
refusal-email-quoting = invalid email address “{ $value }”: the part before the “@” has a character that is not allowed here
refusal-email-domain = invalid email address “{ $value }”: the part after the “@” is not a valid domain name
refusal-email-no-dot = invalid email address “{ $value }”: the domain needs a dot (e.g. example.com)

## Unsubscribe

unsubscribe-title = Unsubscribe
unsubscribe-ask = Unsubscribe?
unsubscribe-older = This link comes from an older message. It can still stop the digests it was sent with, and nothing else: for everything else, use the link in your newest digest.
unsubscribe-stops = This stops:
unsubscribe-button = Unsubscribe
unsubscribed = Unsubscribed
unsubscribed-note = Nothing more of these will be sent:
subscribed-again = Subscribed again
subscribed-again-note = These are back on, from their next time:
unsubscribe-undo = Undo
unsubscribe-manage-all = Manage all your digests
one-click-malformed = A one-click unsubscribe must send exactly List-Unsubscribe=One-Click. Nothing was changed.
one-click-done = You are unsubscribed. Nothing more of these digests will be sent.

## Sign-up and its confirmation

signup-title = Subscribe
signup-heading = Subscribe to digests
signup-sent-title = Check your mail
signup-sent = If the address can receive digests, a message is on its way to it with a link. Follow the link and press { signup-confirm-button } to start your digests. Nothing is sent until you do.
signup-nothing-offered = Nothing is offered for sign-up here at the moment.
signup-email = Email address
signup-collections = Collections
signup-zone = Your time zone
signup-submit = Subscribe
signup-note = We send one message to confirm the address; nothing else until you confirm.
signup-limited-title = Too many sign-ups
signup-limited = Too many sign-ups came from your network or went to this address lately, or too many were made here in the last hour. Nothing was sent. Try again after { $when } UTC.
signup-refused-email-long = the email address is too long
signup-refused-frequency = choose hourly, daily or weekly
signup-refused-hour = choose an hour from 0 to 23
signup-refused-day = choose a day of the week
signup-refused-zone = choose a time zone from the list
signup-refused-collections = choose at least one collection
signup-refused-too-many = too many collections
signup-refused-unknown = choose collections from the list
signup-wish = { $when } ({ $zone })
confirm-title = Confirm
confirm-heading = Confirm your subscription
confirm-digests-of = Digests of:
# The confirm page's button; the sign-up message and page name it.
signup-confirm-button = Confirm
confirm-done-title = Subscribed
confirm-done = Your digests start at their next time.
confirm-already-title = Confirmed already
confirm-already = This sign-up was confirmed before; nothing more was done.

## The whole digest behind "see the full digest"

digest-empty = Nothing in this digest.
digest-more = And { $more } more not listed here: this page lists the first { $listed } of { $count ->
    [one] { $count } item
   *[other] { $count } items
}.
digest-all = { $count ->
    [one] { $count } item.
   *[other] All { $count } items.
}
