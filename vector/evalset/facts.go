package evalset

// The hand-written material the set is generated from: five people, each
// talking with a friend over about ten sessions. Every template is filled
// with one value per person (index 0 to 4: Maya, Tom, Priya, Jonas, Elena),
// so that the five conversations share a shape and none of their words.
// Questions paraphrase the turns they point to: most share no content word
// with them, a few do, as questions people ask do.

// person is one conversation's speaker and the friend they talk to.
type person struct {
	name, he, his, him, friend string
}

var people = [5]person{
	{"Maya", "she", "her", "her", "Lena"},
	{"Tom", "he", "his", "him", "Sam"},
	{"Priya", "she", "her", "her", "Dev"},
	{"Jonas", "he", "his", "him", "Mia"},
	{"Elena", "she", "her", "her", "Rosa"},
}

// slot is one value per person.
type slot [5]string

// fact is a thing a person says once, and the questions it answers.
// {P} is the person's name, {he} and {his} the pronouns, {a}, {b}, {c}
// the slots. say[i%len(say)] is person i's wording, ask likewise; reply
// is what the friend answers, echoing some of the words (a distractor for
// word matching).
type fact struct {
	key     string
	a, b, c slot
	say     []string
	ask     []string
	reply   []string
	// event facts are dated: temporal questions ask when they happened
	// (when) and what came after the one before (after, see events).
	event bool
	when  []string
	// done names the event in a question about what came next ("What
	// did {P} do after {done}?").
	done string
}

var facts = []fact{
	{key: "pet", a: slot{"greyhound", "tabby kitten", "rabbit", "border collie", "grey parrot"}, b: slot{"Biscuit", "Pixel", "Clover", "Rufus", "Kiwi"},
		say:   []string{"We finally brought home a retired {a} from the rescue, we named the little one {b}.", "Big news: there is a {a} living with me now. {b}. I'm obsessed."},
		ask:   []string{"What is the name of {P}'s animal companion?", "What did {P} call the creature {he} adopted?"},
		reply: []string{"A {a}! Send pictures of {b} immediately.", "{b} is such a good name."},
		event: true, done: "adopting {his} pet", when: []string{"When did {P} adopt {his} pet?", "When did {P} get a new animal at home?"}},
	{key: "job", a: slot{"primary school teacher", "night-shift nurse", "backend engineer", "sous-chef", "architect"}, b: slot{"Riverside Primary", "St Anne's hospital", "a payments startup", "Brasserie Nord", "Moreau & Partners"},
		say: []string{"I've been working as a {a} at {b} for three years now.", "Work is fine, being a {a} at {b} keeps me busy."},
		ask: []string{"What does {P} do for a living?", "What is {P}'s profession?"}},
	{key: "hometown", a: slot{"Galway", "Leeds", "Pune", "Hamburg", "Thessaloniki"},
		say:   []string{"I grew up in {a}, by the water.", "Back in {a}, where I was a kid, winters were long."},
		ask:   []string{"Where was {P} raised?", "Which city is {P} originally from?"},
		reply: []string{"I've always wanted to visit {a}."}},
	{key: "allergy", a: slot{"peanuts", "shellfish", "penicillin", "cats", "bee stings"},
		say: []string{"I have to be careful, I'm seriously allergic to {a}.", "My allergy to {a} flared up again, it's the worst."},
		ask: []string{"Is {P} intolerant to anything that makes {him} ill?", "What is {P} allergic to?"}},
	{key: "instrument", a: slot{"cello", "drums", "sitar", "trumpet", "piano"},
		say:   []string{"I started {a} lessons again, my fingers hurt but it's worth it.", "Practised the {a} for two hours tonight."},
		ask:   []string{"Which musical instrument does {P} play?", "What does {P} practise in the evenings for music?"},
		reply: []string{"I didn't know you played the {a}!"}},
	{key: "sport", a: slot{"bouldering", "five-a-side football", "badminton", "rowing", "open-water swimming"},
		say: []string{"Went {a} with the club this morning, totally wrecked now.", "My {a} team won on Sunday!"},
		ask: []string{"What physical activity does {P} do with a club?", "How does {P} keep fit?"}},
	{key: "sibling", a: slot{"brother Conor", "sister Beth", "brother Arjun", "sister Greta", "brother Nikos"},
		say: []string{"My {a} is staying with me this week, the flat feels tiny.", "Had dinner with my {a}, nothing ever changes with them."},
		ask: []string{"What is the name of {P}'s sibling?", "Who in {P}'s family stayed over or came for dinner?"}},
	{key: "car", a: slot{"an old red Fiat Panda", "a second-hand Prius", "an electric scooter", "a vintage VW camper", "a blue Mini"},
		say:   []string{"I bought {a}, first vehicle I've ever owned.", "Finally got {a}, no more buses for me."},
		ask:   []string{"How does {P} get around now that {he} stopped taking public transport?", "What vehicle did {P} buy?"},
		event: true, done: "buying {his} vehicle", when: []string{"When did {P} buy {his} vehicle?", "At what point did {P} stop relying on the bus?"}},
	{key: "food", a: slot{"ramen", "Sunday roasts", "dosa", "sourdough pizza", "grilled octopus"},
		say:   []string{"Honestly {a} is the best food on earth, I could eat it daily.", "Nothing beats {a}, it's my comfort meal."},
		ask:   []string{"What is {P}'s favourite dish?", "Which meal does {P} find most comforting?"},
		reply: []string{"Mmm, {a}. Now I'm hungry."}},
	{key: "book", a: slot{"The Overstory", "Piranesi", "A Suitable Boy", "Stoner", "The Left Hand of Darkness"},
		say: []string{"I'm halfway through {a} and I can't put it down.", "Just finished reading {a}, it wrecked me."},
		ask: []string{"What novel has {P} been reading?", "Which book did {P} recently get absorbed in?"}},
	{key: "fear", a: slot{"heights", "deep water", "spiders", "flying", "crowds"},
		say: []string{"You know I panic around {a}, always have.", "My fear of {a} kicked in badly yesterday."},
		ask: []string{"What makes {P} anxious or scared?", "What phobia does {P} have?"}},
	{key: "language", a: slot{"Portuguese", "Japanese", "German", "Spanish", "Korean"},
		say:   []string{"I've been learning {a} on my lunch breaks with an app.", "My {a} tutor says my accent is improving."},
		ask:   []string{"Which foreign tongue is {P} studying?", "What language is {P} trying to pick up?"},
		reply: []string{"How do you say good morning in {a}?"}},
	{key: "drink", a: slot{"oat flat white", "strong black tea", "masala chai", "espresso", "frappé"},
		say: []string{"Can't function before my {a} in the morning.", "Third {a} of the day, don't judge."},
		ask: []string{"What hot beverage does {P} need to start the day?", "What does {P} drink every morning?"}},
	{key: "neighbour", a: slot{"Mrs Doyle", "Gareth", "Mr Kulkarni", "Frau Becker", "Kyria Eleni"},
		say: []string{"My neighbour {a} keeps leaving courgettes on my doorstep.", "{a} next door fixed my bike chain today, such a sweetheart."},
		ask: []string{"Who lives next door to {P}?", "What is the name of {P}'s neighbour?"}},
	{key: "garden", a: slot{"tomatoes", "chillies", "basil", "strawberries", "lemons"},
		say: []string{"The {a} on the balcony are finally ripening.", "Harvested a whole bowl of {a} from my little garden."},
		ask: []string{"What is {P} growing at home?", "Which plant has {P} been cultivating?"}},
	{key: "show", a: slot{"a Danish crime drama", "a baking competition", "a Korean romance series", "a nature documentary series", "an old sitcom"},
		say: []string{"I binged {a} all weekend, no regrets.", "Currently hooked on {a}, three episodes a night."},
		ask: []string{"What has {P} been watching on TV?", "Which programme did {P} stream all weekend?"}},
	{key: "volunteer", a: slot{"a food bank", "a hospice", "a coding club for girls", "a soup kitchen", "an animal shelter"},
		say:   []string{"I volunteer at {a} on Thursday evenings.", "Spent the evening helping out at {a} again."},
		ask:   []string{"Where does {P} give {his} time for free?", "What charity work does {P} do?"},
		event: true, done: "starting to volunteer", when: []string{"When did {P} start giving {his} time unpaid?", "When did {P} first help out for free?"}},
	{key: "injury", a: slot{"sprained my ankle", "broke my wrist", "pulled a muscle in my back", "cut my hand badly", "twisted my knee"},
		say:   []string{"I {a} on the stairs, so that's the week ruined.", "Bad news, I {a} and I'm stuck at home."},
		ask:   []string{"How did {P} get hurt?", "What injury did {P} suffer?"},
		event: true, done: "getting injured", when: []string{"When did {P} hurt {him}self?", "When was {P} injured?"}},
	{key: "trip", a: slot{"Lisbon", "Kyoto", "Iceland", "Marrakech", "the Dolomites"},
		say:   []string{"Booked it! Off to {a} next month, I can't wait.", "Just got back from {a}, still processing how beautiful it was."},
		ask:   []string{"Where did {P} travel on holiday?", "Which destination did {P} go away to?"},
		reply: []string{"{a} sounds incredible."},
		event: true, done: "{his} holiday", when: []string{"When did {P} go on {his} holiday trip?", "When was {P} away travelling?"}},
	{key: "move", a: slot{"a flat near the canal", "a cottage outside town", "a studio in the city centre", "a houseboat", "an apartment with a rooftop"},
		say:   []string{"We signed the lease on {a}, moving day is Saturday.", "Moved into {a}, boxes everywhere."},
		ask:   []string{"Where does {P} live now after relocating?", "What kind of home did {P} move into?"},
		event: true, done: "moving house", when: []string{"When did {P} change address?", "When did {P} relocate?"}},
	{key: "course", a: slot{"pottery", "a first-aid certificate", "machine learning", "French pastry", "watercolour painting"},
		say:   []string{"Signed up for an evening course in {a}.", "First class of {a} tonight, nervous!"},
		ask:   []string{"What class did {P} enrol in?", "What is {P} studying in the evenings?"},
		event: true, done: "enrolling in {his} evening course", when: []string{"When did {P} begin {his} evening classes?", "When did {P} enrol in a course?"}},
	{key: "promotion", a: slot{"head of year", "charge nurse", "tech lead", "head chef", "senior associate"},
		say:   []string{"They made me {a}! Still can't believe it.", "Got the promotion to {a} today."},
		ask:   []string{"What new role was {P} given at work?", "What position was {P} promoted to?"},
		event: true, done: "being promoted", when: []string{"When was {P} promoted?", "When did {P} move up at work?"}},
	{key: "concert", a: slot{"Fontaines D.C.", "Arctic Monkeys", "A. R. Rahman", "Kraftwerk", "Rosalía"},
		say:   []string{"Saw {a} live last night, my ears are still ringing.", "Got tickets for {a} and it was unreal."},
		ask:   []string{"Which band or artist did {P} see perform?", "What gig did {P} go to?"},
		event: true, done: "the concert", when: []string{"When did {P} go to the concert?", "When did {P} see live music?"}},
	{key: "birthday", a: slot{"a surprise picnic", "karaoke with the ward", "a board-game night", "a dinner cooked by friends", "a boat party"},
		say:   []string{"For my birthday we did {a}, best one in years.", "My birthday turned into {a}, I loved it."},
		ask:   []string{"How did {P} celebrate turning a year older?", "What did {P} do for {his} birthday?"},
		event: true, done: "{his} birthday celebration", when: []string{"When was {P}'s birthday celebration?", "When did {P} celebrate {his} birthday?"}},
	{key: "diet", a: slot{"vegetarian", "off sugar", "vegan", "pescatarian", "off alcohol"},
		say: []string{"I've gone {a} since spring, feeling good about it.", "Being {a} is easier than I expected."},
		ask: []string{"Has {P} changed {his} eating habits?", "What dietary choice has {P} made?"}},
	{key: "game", a: slot{"chess online", "Dungeons & Dragons", "Go", "poker with the neighbours", "backgammon"},
		say: []string{"Lost three games of {a} tonight, I'm terrible.", "Our {a} group meets every Friday."},
		ask: []string{"What game does {P} play regularly?", "Which tabletop or board pastime does {P} enjoy?"}},
	{key: "podcast", a: slot{"a history podcast", "a true crime podcast", "a podcast about startups", "a food podcast", "a design podcast"},
		say: []string{"I listen to {a} on my commute.", "There's {a} I can't stop listening to."},
		ask: []string{"What does {P} listen to while travelling to work?", "What audio show does {P} follow?"}},
	{key: "friend_wedding", a: slot{"Aoife", "Raj", "Ananya", "Lukas", "Sofia"},
		say:   []string{"{a}'s wedding was on Saturday, I cried through the vows.", "I was a witness at {a}'s wedding."},
		ask:   []string{"Whose marriage ceremony did {P} attend?", "Which friend got married?"},
		event: true, done: "the wedding", when: []string{"When did {P} go to a wedding?", "When was the wedding {P} attended?"}},
}

// hop is a question that needs two turns: the first names something, the
// second says what the question asks about it.
type hop struct {
	key          string
	a, b         slot
	first, other []string
	ask          []string
}

var hops = []hop{
	{key: "mentor", a: slot{"Orla", "Dr Hughes", "Kavya", "Chef Lambert", "Dimitra"}, b: slot{"Dublin", "Manchester", "Bangalore", "Lyon", "Athens"},
		first: []string{"My mentor at work is {a}, she's the reason I stayed."},
		other: []string{"{a} is moving back to {b} at the end of the year, I'll miss her."},
		ask:   []string{"Where is the person who guides {P} at work relocating to?"}},
	{key: "gift", a: slot{"my aunt Nora", "my uncle Pete", "my grandmother", "my godfather Klaus", "my cousin Maria"}, b: slot{"a fountain pen", "a record player", "a silk scarf", "a chef's knife", "a drawing tablet"},
		first: []string{"For my birthday {a} gave me {b}, so thoughtful."},
		other: []string{"{a} is in hospital for a hip operation, I'm visiting tomorrow."},
		ask:   []string{"Which relative that gave {P} a present needs surgery?", "Who is in hospital, and what did they once give {P}?"}},
	{key: "bandmate", a: slot{"Niall", "Chris", "Farah", "Ole", "Yannis"}, b: slot{"bakery", "bike repair shop", "bookshop", "food truck", "yoga studio"},
		first: []string{"{a} from my {instrument} group is the funniest person I know."},
		other: []string{"{a} finally opened their own {b}, I went to the launch."},
		ask:   []string{"What business did {P}'s fellow musician open?"}},
	{key: "flatmate", a: slot{"Ciara", "Ben", "Meera", "Timo", "Anna"}, b: slot{"Canada", "Australia", "Singapore", "Norway", "Chile"},
		first: []string{"My old flatmate {a} called out of the blue today."},
		other: []string{"Turns out {a} got a job offer in {b}, starting in spring."},
		ask:   []string{"Which country is {P}'s former housemate moving to?"}},
	{key: "doctor", a: slot{"Dr Walsh", "Dr Okafor", "Dr Rao", "Dr Braun", "Dr Papadaki"}, b: slot{"iron tablets", "physiotherapy", "an inhaler", "new glasses", "a sleep study"},
		first: []string{"Had my check-up with {a} this morning."},
		other: []string{"{a} wants me to try {b} for a couple of months."},
		ask:   []string{"What treatment did {P}'s GP recommend after the check-up?"}},
	{key: "teammate", a: slot{"Declan", "Marcus", "Ishaan", "Felix", "Stavros"}, b: slot{"his knee", "his shoulder", "his ankle", "his wrist", "his hamstring"},
		first: []string{"{a} is the captain of my {sport} side."},
		other: []string{"{a} hurt {b} so he's out for the season."},
		ask:   []string{"What happened to the leader of {P}'s sports team?"}},
	{key: "landlord", a: slot{"Mr Byrne", "Mrs Patel", "Mr Iyer", "Herr Vogel", "Mrs Kosta"}, b: slot{"fifty euros", "eighty pounds", "two thousand rupees", "sixty euros", "forty euros"},
		first: []string{"The person I rent from is {a}, decent enough."},
		other: []string{"{a} is putting the rent up by {b} a month, ugh."},
		ask:   []string{"By how much is {P}'s housing cost going up, and who decided it?"}},
	{key: "colleague", a: slot{"Siobhan", "Kelly", "Aditya", "Paul", "Irini"}, b: slot{"twins", "a baby girl", "a baby boy", "triplets", "a baby girl"},
		first: []string{"{a} sits next to me at work and we share lunch most days."},
		other: []string{"{a} just had {b}! We're all sending gifts."},
		ask:   []string{"What news did {P}'s lunch companion from the office have?"}},
}

// open is an open-domain question: it needs knowledge of the world to see
// that the turn answers it.
type open struct {
	key string
	a   slot
	say []string
	ask []string
}

var opens = []open{
	{key: "cold", a: slot{"I hate being cold, give me a beach any day", "Snow makes me miserable, I'd hibernate if I could", "Anything under fifteen degrees and I'm done", "I'm always freezing, I wear two jumpers indoors", "Winter is my least favourite season by far"},
		say: []string{"{a}."}, ask: []string{"Would {P} enjoy a skiing holiday in the Alps?"}},
	{key: "early", a: slot{"I'm up at five every day, mornings are my best time", "I'm a proper early bird, in bed by ten", "I do my best thinking at dawn", "Up before the sun, every day", "I love the quiet of six in the morning"},
		say: []string{"{a}."}, ask: []string{"Is {P} a night owl?"}},
	{key: "kids", a: slot{"My class of twenty-eight seven-year-olds is chaos but I love them", "The children's ward is where I feel most useful", "I taught my niece to code in Scratch and she loved it", "I run a cooking class for teenagers on Saturdays", "I designed the new playground for the primary school"},
		say: []string{"{a}."}, ask: []string{"Does {P} spend time with young people?"}},
	{key: "budget", a: slot{"Money is tight this month, I'm cooking everything from scratch", "I'm saving every penny for a deposit", "I've cut every subscription, trying to save", "Eating out is off the cards until payday", "I'm putting half my salary aside for the house"},
		say: []string{"{a}."}, ask: []string{"Would {P} be up for an expensive tasting-menu dinner right now?"}},
	{key: "outdoors", a: slot{"Spent the weekend hiking and wild camping, no signal at all", "Slept in a tent by the lake, woke up to mist", "Climbed a hill at sunrise, legs are jelly", "Foraged wild garlic in the woods today", "Kayaked along the coast for three hours"},
		say: []string{"{a}."}, ask: []string{"Does {P} like nature and being outside?"}},
	{key: "tech", a: slot{"I still use a flip phone, smartphones stress me out", "I refuse to have social media, it's bad for me", "I built my own keyboard from a kit", "I just use whatever phone work gives me", "I sketch everything by hand before touching software"},
		say: []string{"{a}."}, ask: []string{"How does {P} feel about gadgets and digital life?"}},
}

// chatter is small talk that answers nothing: the dialogue around the
// facts, said by either speaker.
var chatter = []string{
	"Morning! How's your week going?",
	"Ha, same here honestly.",
	"Ugh, Mondays.",
	"What are you up to this weekend?",
	"Not much, probably just resting.",
	"That's so good to hear.",
	"Sorry, I was in a meeting, what did I miss?",
	"Did you see the weather forecast? Rain all week apparently.",
	"I need a holiday, seriously.",
	"Let's catch up properly soon.",
	"How's your mum doing?",
	"She's well, thanks for asking.",
	"I'm so tired today.",
	"Did you sleep badly again?",
	"Work has been a lot lately.",
	"Oh no, that sounds stressful.",
	"Anyway, enough about me. How are you?",
	"I'm good, just busy.",
	"We should get coffee next week.",
	"Yes! Thursday?",
	"Thursday works for me.",
	"I forgot to reply yesterday, sorry.",
	"No worries at all.",
	"The traffic this morning was horrendous.",
	"I think I'm coming down with a cold.",
	"Drink lots of water and rest.",
	"Have you tried that new place on the corner?",
	"Not yet, is it any good?",
	"It's decent, a bit pricey.",
	"My phone died halfway through the day.",
	"That always happens to me too.",
	"Tell me everything.",
	"Long story, I'll tell you in person.",
	"I'm proud of you, you know.",
	"Thanks, that means a lot.",
	"What time is it there?",
	"Almost midnight, I should sleep.",
	"Good night!",
	"Talk tomorrow.",
	"Happy Friday!",
	"I've got so many errands to run.",
	"The laundry never ends.",
	"I made soup, very proud of myself.",
	"Did you finish that thing you were working on?",
	"Almost, a few more days.",
	"Fingers crossed for you.",
	"Haha, classic.",
	"Wait, really?",
	"That's wild.",
	"I can't stop laughing at that.",
	"Oh, by the way, I saw your post.",
	"The train was cancelled again.",
	"I had the strangest dream last night.",
	"Is it just me or is everyone busy this month?",
	"It's definitely not just you.",
	"Let me know when you're free.",
	"I'll call you later.",
	"Sounds like a plan.",
	"Honestly, what a day.",
	"Fair enough.",
}

// reactions are the friend's answers to news that echo none of its words.
var reactions = []string{
	"Oh wow!",
	"No way, that's amazing.",
	"Good for you, honestly.",
	"Ha, I love that.",
	"Oh no, are you okay?",
	"That's huge news.",
	"I had no idea!",
	"You never told me that.",
	"Proud of you.",
	"How do you feel about it?",
	"That's so you.",
	"Tell me more!",
}
