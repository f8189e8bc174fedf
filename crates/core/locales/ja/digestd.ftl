# digestd's words in Japanese. Keys and variables as in the English catalogue.

weekday-short = { $day ->
    [mon] 月
    [tue] 火
    [wed] 水
    [thu] 木
    [fri] 金
    [sat] 土
   *[sun] 日
}
weekday-long = { $day ->
    [mon] 月曜日
    [tue] 火曜日
    [wed] 水曜日
    [thu] 木曜日
    [fri] 金曜日
    [sat] 土曜日
   *[sun] 日曜日
}
month-short = { $month ->
    [jan] 1月
    [feb] 2月
    [mar] 3月
    [apr] 4月
    [may] 5月
    [jun] 6月
    [jul] 7月
    [aug] 8月
    [sep] 9月
    [oct] 10月
    [nov] 11月
   *[dec] 12月
}
date-month-first = { $month }{ $day }日({ $weekday })
date-day-first = { $month }{ $day }日({ $weekday })
someone = 誰か
people-two = { $first }と{ $second }
people-more = { $first }、{ $second }ほか{ $rest }人
attribute-start = 開始時刻
attribute-reminder = リマインダー
attribute-rrule = 繰り返し
attribute-kind = 種類
attribute-body = 本文
line-created = { $who }が{ $kind }「{ $title }」を作成しました
line-created-starting = { $who }が{ $kind }「{ $title }」を作成しました（開始: { $when }）
line-deleted = { $who }が{ $kind }「{ $title }」を削除しました
line-added = { $who }が「{ $title }」を{ $collection }に追加しました
line-removed = { $who }が「{ $title }」を{ $collection }から外しました
line-now = { $who }が「{ $title }」を進行中にしました
line-edited = { $who }が「{ $title }」の{ $attribute }を変更しました: { $change }{ $also }
line-edited-bare = { $who }が「{ $title }」を変更しました
line-edited-also = 、{ $attribute }: { $change }
line-edited-more = 、ほか{ $count }件の変更
line-earlier = 遅れて記録（{ $when }）: { $line }
line-upcoming = { $when }: { $title }
line-upcoming-notes = { $when }: { $title }（{ $notes }）
note-reminder = リマインダー
note-repeats = 繰り返し
note-reminder-repeats = リマインダー、繰り返し
change-from-to = { $from } → { $to }
change-same-day = { $date } { $from } → { $to } { $zone }
change-to = → { $to }
change-from-to-nothing = { $from } → なし
change-to-nothing = → なし
quoted = 『{ $value }』
subject-hourly-digest = 毎時のダイジェスト: { $collection }
subject-daily-digest = 毎日のダイジェスト: { $collection }
subject-weekly-digest = 毎週のダイジェスト: { $collection }
subject-hourly-agenda = 毎時の予定: { $collection }
subject-daily-agenda = 毎日の予定: { $collection }
subject-weekly-agenda = 毎週の予定: { $collection }
all-collections = すべてのコレクション
collections-yours = あなたのコレクション
collections-two = { $first }と{ $second }
collections-many = { $count }個のコレクション
heading-no-changes = { $since }以降、{ $collections }に変更はありません
heading-changes = { $since }以降、{ $collections }に{ $count ->
   *[other] { $count }件の変更
}があります
heading-nothing-upcoming = { $span }、{ $collections }に予定はありません
heading-upcoming = { $span }、{ $collections }に{ $count }件の予定があります
span-hourly = { $time } { $zone }から
span-daily = { $date } { $time } { $zone }からの1日
span-weekly = { $date }からの1週間
heading-seen = { $heading }（{ $seen }）
seen-left-out = 既読の変更{ $count }件は省略しています
more = ほか{ $count }件
full-digest = ダイジェスト全文を見る
the-full-digest = ダイジェスト全文
times-shown = 時刻は{ $zone }で表示しています。
manage-subscriptions = 購読の管理
unsubscribe-digest = このダイジェストの購読を解除
open-full-digest = ダイジェスト全文を開く
manage-short = 管理
batch-subject = { $subject }（ほか{ $count }件）
notification-sent = { $when }に送信されたメッセージ: { $subject }
notification-batch-subject = { $subject }（ほか{ $count }件）
signup-subject = ダイジェスト購読の確認
signup-asked = このアドレス宛てに{ $names }のダイジェストの購読が申し込まれました。
signup-open = 確認するには、このリンクを開いて「{ signup-confirm-button }」を押してください:
signup-button = 購読を確認する
signup-copy = または、このアドレスをブラウザーにコピーしてください:
signup-until = リンクの有効期限は{ $until } UTCです。お心当たりがない場合は、このメッセージを無視してください。これ以上は何も送信されません。
