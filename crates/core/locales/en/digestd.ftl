# digestd's words in English: the reference catalogue. Every other
# catalogue has the same keys and uses the same variables.
# A value that must begin with a space starts with { "" }.

## Dates: the names of days and months. The order of a date (day or
## month first) follows the reader's locale; these patterns say how each
## order reads in this language.

weekday-short = { $day ->
    [mon] Mon
    [tue] Tue
    [wed] Wed
    [thu] Thu
    [fri] Fri
    [sat] Sat
   *[sun] Sun
}
weekday-long = { $day ->
    [mon] Monday
    [tue] Tuesday
    [wed] Wednesday
    [thu] Thursday
    [fri] Friday
    [sat] Saturday
   *[sun] Sunday
}
month-short = { $month ->
    [jan] Jan
    [feb] Feb
    [mar] Mar
    [apr] Apr
    [may] May
    [jun] Jun
    [jul] Jul
    [aug] Aug
    [sep] Sep
    [oct] Oct
    [nov] Nov
   *[dec] Dec
}
# "Mon, Nov 23"
date-month-first = { $weekday }, { $month } { $day }
# "Mon 23 Nov"
date-day-first = { $weekday } { $day } { $month }

## Who did it

someone = Someone
people-two = { $first } and { $second }
people-more = { $first }, { $second } and { $rest ->
    [one] { $rest } other
   *[other] { $rest } others
}

## What changed: attribute names (others are shown as they are stored)

attribute-start = start time
attribute-reminder = reminder
attribute-rrule = recurrence
attribute-kind = type
attribute-body = text

## One line per item. $title is the item's title, $who who changed it.

line-created = { $who } created the { $kind } { $title }
line-created-starting = { $who } created the { $kind } { $title }, starting { $when }
line-deleted = { $who } deleted the { $kind } { $title }
line-added = { $who } added { $title } to { $collection }
line-removed = { $who } removed { $title } from { $collection }
line-now = { $who } marked { $title } as now
line-edited = { $who } changed the { $attribute } of { $title } { $change }{ $also }
line-edited-bare = { $who } changed { $title }
line-edited-also = , and the { $attribute } { $change }
line-edited-more = , and { $count ->
    [one] { $count } more change
   *[other] { $count } more changes
}
# A change recorded late: when it happened, then its line.
line-earlier = Earlier, { $when }: { $line }
line-upcoming = { $when }: { $title }
line-upcoming-notes = { $when }: { $title } ({ $notes })
note-reminder = reminder
note-repeats = repeats
note-reminder-repeats = reminder, repeats

## How a value changed

change-from-to = from { $from } to { $to }
# Both on one day: "from 3:00 PM to 4:00 PM PST on Mon, Nov 23"
change-same-day = from { $from } to { $to } { $zone } on { $date }
change-to = to { $to }
change-from-to-nothing = from { $from } to nothing
change-to-nothing = to nothing
quoted = “{ $value }”

## The subject (the same for every digest of a subscription)

subject-hourly-digest = Hourly digest: { $collection }
subject-daily-digest = Daily digest: { $collection }
subject-weekly-digest = Weekly digest: { $collection }
subject-hourly-agenda = Hourly agenda: { $collection }
subject-daily-agenda = Daily agenda: { $collection }
subject-weekly-agenda = Weekly agenda: { $collection }
all-collections = all collections

## The first line of a digest

collections-yours = your collections
collections-two = { $first } and { $second }
collections-many = { $count } collections
heading-no-changes = No changes in { $collections } since { $since }
heading-changes = { $count ->
    [one] { $count } change
   *[other] { $count } changes
} in { $collections } since { $since }
heading-nothing-upcoming = Nothing coming up in { $collections } { $span }
heading-upcoming = { $count ->
    [one] { $count } item
   *[other] { $count } items
} coming up in { $collections } { $span }
span-hourly = from { $time } { $zone }
span-daily = in the day from { $date }, { $time } { $zone }
span-weekly = in the week from { $date }
heading-seen = { $heading } ({ $seen })
seen-left-out = { $count ->
    [one] { $count } change you have already seen is left out
   *[other] { $count } changes you have already seen are left out
}

## Around the lines: email, chat, SMS and the chat services

more = and { $count } more
full-digest = see the full digest
the-full-digest = the full digest
times-shown = Times are shown in { $zone }.
manage-subscriptions = Manage your subscriptions
unsubscribe-digest = Unsubscribe from this digest
open-full-digest = Open the full digest
manage-short = Manage
batch-subject = { $subject } (+{ $count } more)

## Notifications batched into one message

notification-sent = Message sent on { $when } regarding { $subject }
notification-batch-subject = { $subject } (and { $count } more)

## The sign-up verification message

signup-subject = Confirm your digest subscription
signup-asked = Someone, hopefully you, asked for digests of { $names } at this address.
signup-open = To confirm, open this link and press { signup-confirm-button }:
signup-button = Confirm my subscription
signup-copy = Or copy this address into your browser:
signup-until = The link works until { $until } UTC. If you did not ask for this, ignore this message: nothing more will be sent.
